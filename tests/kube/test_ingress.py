"""Ingress and IngressClass through the real kubectl: kubectl create ingress, validation with the real messages,
the default class, and what the k3s profile ships in kube-system (traefik's Deployment, Service, class and CRDs)."""

from __future__ import annotations

import textwrap

import pytest

from pytest_netarena.kube import EmbeddedAPIServer
from pytest_netarena.kube.k3s import Profile

from .conftest import kubectl_for, mask


@pytest.fixture(scope="module")
def k3s():
    server = EmbeddedAPIServer(profile=Profile()).start()
    server.snapshot()
    yield server
    server.stop()


@pytest.fixture
def kc(k3s, kubectl_bin, tmp_path):
    k3s.reset()
    return kubectl_for(k3s, kubectl_bin, tmp_path)


def test_k3s_ships_traefik_as_its_ingress_controller(kc):
    assert mask(kc("get", "ingressclass").stdout).splitlines()[1] == \
        "traefik  traefik.io/ingress-controller  <none>  <age>"
    kc("-n", "kube-system", "rollout", "status", "deployment/traefik", "--timeout=10s")
    service = mask(kc("-n", "kube-system", "get", "service", "traefik").stdout).splitlines()[1]
    assert service.startswith("traefik  LoadBalancer") and "80:" in service and "443:" in service
    crds = kc("get", "crd", "-o", "name").stdout
    assert "ingressroutes.traefik.io" in crds and "helmcharts.helm.cattle.io" in crds
    kc("apply", "-f", "-", input="apiVersion: traefik.io/v1alpha1\nkind: Middleware\nmetadata: {name: strip}\n"
                                 "spec: {stripPrefix: {prefixes: [/api]}}\n")
    assert kc("get", "middlewares.traefik.io", "strip", "-o", "jsonpath={.spec.stripPrefix.prefixes[0]}").stdout == "/api"


def test_create_ingress_takes_the_default_class(kc, k3s):
    assert kc("create", "ingress", "shop", "--rule=shop.example.test/*=web:http").stdout == \
        "ingress.networking.k8s.io/shop created\n"
    ingress = k3s.get_object("Ingress", "default", "shop")
    assert ingress["spec"]["ingressClassName"] == "traefik"
    path = ingress["spec"]["rules"][0]["http"]["paths"][0]
    assert path == {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"name": "http"}}}}
    assert mask(kc("get", "ingress").stdout).splitlines()[1] == "shop  traefik  shop.example.test  80  <age>"


def test_an_ingress_is_validated_with_the_real_messages(kc):
    refused = kc("apply", "-f", "-", input=textwrap.dedent("""\
        apiVersion: networking.k8s.io/v1
        kind: Ingress
        metadata: {name: bad}
        spec:
          rules:
          - host: 10.0.0.1
            http:
              paths:
              - path: shop
                pathType: Prefix
                backend: {service: {name: web, port: {}}}
              - path: /
                backend: {service: {name: web, port: {number: 80}}}
        """), check=False)
    for cause in ('spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
                  'spec.rules[0].http.paths[0].path: Invalid value: "shop": must be an absolute path',
                  "spec.rules[0].http.paths[0].backend.service.port: Required value: port name or number is required",
                  "spec.rules[0].http.paths[1].pathType: Required value: pathType must be specified"):
        assert cause in refused.stderr
    old_api = kc("apply", "-f", "-", input="apiVersion: networking.k8s.io/v1beta1\nkind: Ingress\nmetadata: {name: x}\n",
                 check=False)
    assert 'no matches for kind "Ingress" in version "networking.k8s.io/v1beta1"' in old_api.stderr
    no_controller = kc("apply", "-f", "-", input="apiVersion: networking.k8s.io/v1\nkind: IngressClass\n"
                                                 "metadata: {name: x}\nspec: {controller: nginx}\n", check=False)
    assert 'spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")' \
        in no_controller.stderr
