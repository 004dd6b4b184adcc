# A purple agent: any model litellm reaches (or a python:MODULE:CLASS agent), served over A2A.
#   docker build -f docker/purple.Dockerfile --build-arg AGENT=openai:gpt-4o -t netarena-purple .
#   docker run -e OPENAI_API_KEY -p 9019:9019 netarena-purple --host 0.0.0.0 --port 9019 --card-url http://purple:9019/
# AgentBeats passes --host, --port and --card-url; the agent is fixed when the image is built.
FROM python:3.11-slim
ARG AGENT=openai:gpt-4o
ENV NETARENA_AGENT=${AGENT} LITELLM_LOCAL_MODEL_COST_MAP=True PYTHONUNBUFFERED=1
WORKDIR /opt/netarena
COPY setup.py pyproject.toml README.md requirements.lock ./
COPY pytest_netarena ./pytest_netarena
COPY suites ./suites
COPY fixtures ./fixtures
# exactly the versions CI tested (requirements.lock, with hashes; no resolver), then the package itself
RUN pip install --no-cache-dir --no-deps --require-hashes -r requirements.lock \
    && pip install --no-cache-dir --no-deps .
EXPOSE 9019
ENTRYPOINT ["sh", "-c", "exec netarena serve-purple --agent \"$NETARENA_AGENT\" \"$@\"", "netarena"]
CMD ["--host", "0.0.0.0", "--port", "9019"]
