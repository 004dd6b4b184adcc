"""An MCP 1.x client (run by the tests with the SDK 1.x, from a virtual environment of its own) playing one episode
of `netarena mcp`: over stdio (`stdio COMMAND...`) or streamable HTTP (`http URL TOKEN`), the calls read as JSON from
stdin; prints as JSON the negotiated revision, each call's texts and error flag, the resources and the verdict read."""

from __future__ import annotations

import asyncio
import json
import os
import sys


async def play(client, calls: list) -> dict:
    init = await client.initialize()
    resources = await client.list_resources()
    before = await client.read_resource("netarena://episode/verdict")
    results = []
    for name, arguments in calls:
        result = await client.call_tool(name, arguments)
        results.append({"texts": [part.text for part in result.content], "error": result.isError})
    after = await client.read_resource("netarena://episode/verdict")
    return {"protocol_version": init.protocolVersion, "results": results,
            "resources": sorted(str(resource.uri) for resource in resources.resources),
            "verdict_before": json.loads(before.contents[0].text), "verdict": json.loads(after.contents[0].text)}


async def main(argv: list[str]) -> dict:
    import mcp
    from mcp import ClientSession

    calls = json.loads(sys.stdin.read())
    if argv[0] == "stdio":
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=argv[1], args=argv[2:], env=dict(os.environ))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            return {"sdk": mcp.__name__, **await play(client, calls)}
    from mcp.client.streamable_http import streamablehttp_client

    url, token = argv[1], argv[2]
    async with streamablehttp_client(url, headers={"Authorization": f"Bearer {token}"}) as (read, write, _), \
            ClientSession(read, write) as client:
        return {"sdk": mcp.__name__, **await play(client, calls)}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1:]))))
