"""The kustomize renderer against what kustomize does for the same input (run by lint-deploy)."""
import tempfile
import textwrap
import unittest
from pathlib import Path

import kustomize

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels: {app: a}
spec:
  selector:
    matchLabels: {app: a}
  template:
    metadata:
      labels: {app: a}
      annotations: {keep: "1", drop: "1"}
    spec:
      containers:
        - name: main
          image: countdown
          args: ["countdown-worker", "--flag"]
          env:
            - {name: A, value: "1"}
            - {name: B, value: "2"}
          resources:
            limits: {cpu: "1", memory: 1Gi}
        - name: side
          image: registry.local:5000/side:1.0
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: config
data: {A: "1", B: "2"}
"""


class RendererTests(unittest.TestCase):
    def setUp(self):
        self.temp = tempfile.TemporaryDirectory()
        self.root = Path(self.temp.name)
        self.write("base/resources.yaml", DEPLOYMENT)
        self.write("base/kustomization.yaml", "resources: [resources.yaml]\n")

    def tearDown(self):
        self.temp.cleanup()

    def write(self, name, text):
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))

    def overlay(self, kustomization, **files):
        for name, text in files.items():
            self.write(f"overlay/{name}", text)
        self.write("overlay/kustomization.yaml", kustomization)
        built = kustomize.build(self.root / "overlay")
        return {r["kind"]: r for r in built}

    def test_strategic_merge_follows_the_schema(self):
        out = self.overlay("resources: [../base]\npatches:\n  - path: p.yaml\n", **{"p.yaml": """\
            apiVersion: apps/v1
            kind: Deployment
            metadata: {name: app}
            spec:
              template:
                metadata:
                  annotations: {drop: null, added: "1"}
                spec:
                  containers:
                    - name: main
                      args: ["countdown-admin"]
                      env:
                        - {name: B, value: "20"}
                        - {name: C, value: "3"}
                      resources:
                        limits: {memory: 2Gi}
            """})
        pod = out["Deployment"]["spec"]["template"]
        main, side = pod["spec"]["containers"]
        self.assertEqual(pod["metadata"]["annotations"], {"keep": "1", "added": "1"})
        self.assertEqual(main["args"], ["countdown-admin"])  # atomic list: replaced
        self.assertEqual(main["env"], [{"name": "A", "value": "1"}, {"name": "B", "value": "20"},
                                       {"name": "C", "value": "3"}])  # merged by name, new items appended
        self.assertEqual(main["resources"]["limits"], {"cpu": "1", "memory": "2Gi"})
        self.assertEqual(side["name"], "side")  # untouched list item survives

    def test_config_map_data_merges(self):
        out = self.overlay("resources: [../base]\npatches:\n  - path: p.yaml\n", **{"p.yaml": """\
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: config}
            data: {B: "two"}
            """})
        self.assertEqual(out["ConfigMap"]["data"], {"A": "1", "B": "two"})

    def test_namespace_sets_namespaced_objects_and_renames_namespaces(self):
        out = self.overlay("namespace: prod\nresources: [ns.yaml, ../base]\n", **{"ns.yaml": """\
            apiVersion: v1
            kind: Namespace
            metadata: {name: something-else}
            """})
        self.assertEqual(out["Namespace"]["metadata"], {"name": "prod"})
        self.assertEqual(out["Deployment"]["metadata"]["namespace"], "prod")

    def test_labels_reach_templates_but_not_selectors(self):
        out = self.overlay("resources: [../base]\nlabels:\n  - pairs: {env: prod}\n    includeTemplates: true\n")
        deployment = out["Deployment"]
        self.assertEqual(deployment["metadata"]["labels"], {"app": "a", "env": "prod"})
        self.assertEqual(deployment["spec"]["template"]["metadata"]["labels"], {"app": "a", "env": "prod"})
        self.assertEqual(deployment["spec"]["selector"]["matchLabels"], {"app": "a"})
        self.assertEqual(out["ConfigMap"]["metadata"]["labels"], {"env": "prod"})

    def test_images(self):
        out = self.overlay("resources: [../base]\nimages:\n  - {name: countdown, newName: reg.io/cd, newTag: '1.2'}\n"
                           "  - {name: 'registry.local:5000/side', digest: 'sha256:abc'}\n")
        main, side = out["Deployment"]["spec"]["template"]["spec"]["containers"]
        self.assertEqual(main["image"], "reg.io/cd:1.2")
        self.assertEqual(side["image"], "registry.local:5000/side@sha256:abc")

    def test_what_it_does_not_implement_is_an_error(self):
        for kustomization in ("resources: [../base]\ncommonLabels: {a: b}\n",
                              "resources: [../base]\nlabels:\n  - pairs: {a: b}\n    includeSelectors: true\n",
                              "resources: [../base]\npatches:\n  - {path: p.yaml, target: {kind: Deployment}}\n",
                              "resources: [../missing]\n"):
            with self.subTest(kustomization=kustomization), self.assertRaises(kustomize.KustomizeError):
                self.overlay(kustomization, **{"p.yaml": "kind: Deployment\nmetadata: {name: app}\n"})

    def test_a_patch_must_match_one_object(self):
        with self.assertRaises(kustomize.KustomizeError):
            self.overlay("resources: [../base]\npatches:\n  - path: p.yaml\n", **{"p.yaml": """\
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: other}
                """})
