# The pytest-netarena green agent (one app per container), for AgentBeats.
#   docker build -f docker/green.Dockerfile --build-arg APP=k8s -t netarena-green-k8s .
#   docker run -p 9009:9009 netarena-green-k8s --host 0.0.0.0 --port 9009 --card-url http://green:9009/
# AgentBeats passes --host, --port and --card-url; the app is fixed when the image is built.
# The route app needs Mininet's network namespaces: run that image with --privileged.
FROM python:3.11-slim
ARG APP=k8s
ENV NETARENA_APP=${APP} LITELLM_LOCAL_MODEL_COST_MAP=True PYTHONUNBUFFERED=1
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap jq iproute2 iputils-ping iptables mininet \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/netarena
COPY setup.py pyproject.toml README.md requirements.lock ./
COPY pytest_netarena ./pytest_netarena
COPY suites ./suites
COPY fixtures ./fixtures
# exactly the versions CI tested (requirements.lock, with hashes; no resolver), then the package itself
RUN pip install --no-cache-dir --no-deps --require-hashes -r requirements.lock \
    && pip install --no-cache-dir --no-deps .
EXPOSE 9009
ENTRYPOINT ["sh", "-c", "exec netarena serve-green --app \"$NETARENA_APP\" \"$@\"", "netarena"]
CMD ["--host", "0.0.0.0", "--port", "9009"]
