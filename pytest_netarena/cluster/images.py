"""What a container image becomes here: busybox's applets running its command, or one of our stand-ins.

No image is pulled. An image is known by its repository name:

- `busybox` (any tag or registry) runs the container's command (default `sh`) with Debian's busybox
  applets (`sh`, `wget`, `httpd`, `nc`, `nslookup`, ...);
- `nginx` without a command is a stand-in answering as nginx's default server on port 80; with a
  command, that command runs with busybox's applets (an nginx image has a shell);
- Online Boutique's images (`microservices-demo/<service>`) and `redis` are stand-ins listening on the
  declared ports and calling the services the real one calls;
- `coredns` is the cluster DNS (the kube-dns Service's pods);
- an ingress controller (k3s's traefik, ingress-nginx's controller) routes HTTP by host and path to the
  Services its class's Ingresses name (ingress.py);
- any other image with a command runs it with busybox's applets; without one it is a generic stand-in
  answering HTTP on its declared ports.

Images made to call the API server (`alpine/k8s`, `bitnami/kubectl`, `rancher/kubectl`, ...) get the
harness's kubectl and curl beside the applets; `curlimages/curl` gets curl.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Online Boutique's call graph (microservices-demo v0.10): who calls whom, as NAME:PORT of the Services
BOUTIQUE_CALLS = {
    "frontend": ("productcatalogservice:3550", "currencyservice:7000", "cartservice:7070",
                 "recommendationservice:8080", "shippingservice:50051", "checkoutservice:5050", "adservice:9555"),
    "checkoutservice": ("productcatalogservice:3550", "shippingservice:50051", "paymentservice:50051",
                        "emailservice:5000", "currencyservice:7000", "cartservice:7070"),
    "recommendationservice": ("productcatalogservice:3550",),
    "cartservice": ("redis-cart:6379",),
    "loadgenerator": ("frontend:80",),
}
#: how each Online Boutique service says it cannot reach a dependency (the real ones log in these shapes)
BOUTIQUE_LANGUAGE = {"frontend": "go", "checkoutservice": "go", "shippingservice": "go", "productcatalogservice": "go",
                     "cartservice": "csharp", "currencyservice": "node", "paymentservice": "node",
                     "emailservice": "python", "recommendationservice": "python", "loadgenerator": "python",
                     "adservice": "java"}


@dataclass(frozen=True)
class Image:
    """How to run one container."""

    kind: str  #: "busybox" (a process), "nginx", "boutique", "redis", "coredns", "ingress" or "generic" (stand-ins)
    service: str = ""  #: for "boutique": which Online Boutique service
    argv: tuple[str, ...] = ()  #: for "busybox": the command line
    clients: tuple[str, ...] = ()  #: API clients the image holds beside busybox's applets (kubectl, curl)

    @property
    def runs_process(self) -> bool:
        return self.kind == "busybox"


def repository(image: str) -> str:
    """The last path part of an image reference, without tag or digest (`busybox` of `docker.io/library/busybox:1.36`)."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return last.split(":", 1)[0].lower()


def command_line(container: dict, entrypoint: tuple[str, ...] = (), cmd: tuple[str, ...] = ()) -> tuple[str, ...]:
    """command + args as the runtime combines them with the image's ENTRYPOINT and CMD: command replaces the
    entrypoint (and drops the CMD), args replace the CMD."""
    command = [str(part) for part in container.get("command") or ()]
    args = [str(part) for part in container.get("args") or ()]
    if command:
        return (*command, *args)
    return (*entrypoint, *(args or cmd))


def clients(image: str) -> tuple[str, ...]:
    """The API clients an image is known to hold: kubectl images (alpine/k8s, bitnami/kubectl...) kubectl and curl."""
    name = repository(image)
    if name in ("k8s", "kubectl", "k8s-kubectl") or name.startswith("kubectl"):
        return ("kubectl", "curl")
    if name == "curl":
        return ("curl",)
    return ()


#: daemons whose images run their own program (their args are its options): stand-ins even when given args
DAEMONS = ("local-path-provisioner", "metrics-server", "mirrored-metrics-server", "klipper-helm", "klipper-lb")


def resolve(container: dict) -> Image:
    image = str(container.get("image") or "")
    name = repository(image)
    if name == "busybox":  # no ENTRYPOINT, CMD sh
        return Image("busybox", argv=command_line(container, (), ("sh",)))
    held = clients(image)
    if container.get("command"):
        return Image("busybox", argv=command_line(container), clients=held)
    if "microservices-demo/" in image and name in BOUTIQUE_LANGUAGE:
        return Image("boutique", service=name)
    if name in ("nginx", "redis", "coredns"):
        return Image(name)
    if "traefik" in name or "ingress-nginx" in image or "nginx-ingress" in image:
        return Image("ingress")
    if name in DAEMONS:
        return Image("generic")
    if container.get("args"):  # an image whose CMD the args replace (alpine, a kubectl image's entrypoint)
        entrypoint = ("kubectl",) if "kubectl" in held and name != "k8s" else ()
        return Image("busybox", argv=command_line(container, entrypoint), clients=held)
    return Image("generic")


def dependencies(container: dict, image: Image) -> tuple[str, ...]:
    """NAME:PORT of the Services a stand-in calls: the container's `*_ADDR` variables (as Online Boutique's
    manifests set them), else the known call graph of its image."""
    found = []
    for variable in container.get("env") or ():
        name, value = str(variable.get("name") or ""), variable.get("value")
        if name.endswith("_ADDR") and isinstance(value, str) and ":" in value:
            found.append(value)
    if found:
        return tuple(found)
    return BOUTIQUE_CALLS.get(image.service, ())
