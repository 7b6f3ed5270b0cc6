// The Kubernetes manifests of deploy/k8s, checked without a cluster: every
// object validates against the Kubernetes schemas (kubernetes-models: the
// API's OpenAPI schemas as JSON Schema), the router's ConfigMap carries
// docs/deploy/haproxy.cfg byte for byte, and the names the pieces use to
// find each other agree. Also `haproxy -c` on the shipped configuration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

import { parseAllDocuments } from 'yaml';

import { ROOT, HAPROXY_CFG } from './cluster.mjs';

const DIR = path.join(ROOT, 'deploy/k8s');

// {file: [object]} of every manifest (kustomization.yaml is kustomize's,
// not the API's: checked apart).
function manifests() {
  const out = {};
  for (const f of readdirSync(DIR).filter((n) => n.endsWith('.yaml') && n !== 'kustomization.yaml')) {
    const docs = parseAllDocuments(readFileSync(path.join(DIR, f), 'utf8'));
    for (const d of docs) assert.deepEqual(d.errors, [], `${f}: YAML errors`);
    out[f] = docs.map((d) => d.toJS()).filter(Boolean);
  }
  return out;
}

// The kubernetes-models class of an object, from its apiVersion and kind.
async function modelOf(obj) {
  const group = obj.apiVersion.includes('/') ? obj.apiVersion : obj.apiVersion; // "apps/v1", "v1", "node.k8s.io/v1"
  const mod = await import(`kubernetes-models/${group}`);
  const Model = mod[obj.kind];
  assert.ok(Model, `kubernetes-models knows ${obj.apiVersion} ${obj.kind}`);
  return Model;
}

test('every manifest validates against the Kubernetes schemas', async () => {
  const all = Object.entries(manifests()).flatMap(([f, objs]) => objs.map((o) => [f, o]));
  const kinds = all.map(([, o]) => o.kind).sort();
  assert.deepEqual(kinds, ['ConfigMap', 'Deployment', 'RuntimeClass', 'Secret', 'Service', 'Service', 'StatefulSet']);
  for (const [f, obj] of all) {
    const Model = await modelOf(obj);
    assert.doesNotThrow(() => new Model(obj).validate(), `${f}: ${obj.kind} ${obj.metadata?.name}`);
  }
  // The validator does refuse what breaks the schema (it is not a no-op).
  const sts = all.find(([, o]) => o.kind === 'StatefulSet')[1];
  const Model = await modelOf(sts);
  const broken = structuredClone(sts);
  broken.spec.replicas = 'three';
  assert.throws(() => new Model(broken).validate());
  const noContainers = structuredClone(sts);
  delete noContainers.spec.template.spec.containers;
  assert.throws(() => new Model(noContainers).validate());
});

test('the pieces agree: instance names, the router\'s configuration, the Services, the scrape annotations', () => {
  const m = manifests();
  const find = (kind, name) => Object.values(m).flat().find((o) => o.kind === kind && (!name || o.metadata.name === name));
  const sts = find('StatefulSet');
  const pod = sts.spec.template.spec;
  const box = pod.containers[0];
  // Each pod's name is its instance name, and the router lists those names.
  const inst = box.env.find((e) => e.name === 'SAGEBOX_INSTANCE');
  assert.equal(inst.valueFrom.fieldRef.fieldPath, 'metadata.name');
  const cfg = readFileSync(HAPROXY_CFG, 'utf8');
  for (let i = 0; i < sts.spec.replicas; i++)
    assert.match(cfg, new RegExp(`\\n    server ${sts.metadata.name}-${i} "\\$\\{SAGEBOX_${i}-${sts.metadata.name}-${i}\\.${sts.spec.serviceName}:8080\\}"`));
  // The ConfigMap is docs/deploy/haproxy.cfg, byte for byte.
  const cm = find('ConfigMap', 'sagebox-haproxy');
  assert.equal(cm.data['haproxy.cfg'], cfg, 'deploy/k8s/haproxy.yaml carries docs/deploy/haproxy.cfg as it is (regenerate it)');
  const router = find('Deployment', 'sagebox-haproxy');
  assert.equal(router.spec.template.spec.volumes[0].configMap.name, 'sagebox-haproxy');
  const env = Object.fromEntries(router.spec.template.spec.containers[0].env.map((e) => [e.name, e.value]));
  for (let i = 0; i < sts.spec.replicas; i++)
    assert.equal(env[`SAGEBOX_${i}`], `${sts.metadata.name}-${i}.${sts.spec.serviceName}.$(POD_NAMESPACE).svc.cluster.local:8080`);
  // The headless Service: a DNS name per pod, draining ones too.
  const headless = find('Service', sts.spec.serviceName);
  assert.equal(headless.spec.clusterIP, 'None');
  assert.equal(headless.spec.publishNotReadyAddresses, true);
  // SIGTERM drains for drain_timeout; the pod's grace covers it.
  const drain = Number(box.env.find((e) => e.name === 'SAGEBOX_DRAIN_TIMEOUT').value);
  assert.ok(pod.terminationGracePeriodSeconds > drain);
  // Readiness is /health (404 while draining); liveness is not (a draining pod is alive).
  assert.equal(box.readinessProbe.httpGet.path, '/health');
  assert.ok(!box.livenessProbe.httpGet, 'liveness does not use /health');
  // Scraped through annotations, on the token-free metrics port.
  const ann = sts.spec.template.metadata.annotations;
  assert.equal(ann['prometheus.io/scrape'], 'true');
  const port = box.args[box.args.indexOf('--metrics-listen') + 1];
  assert.equal(port.split(':').pop(), ann['prometheus.io/port']);
  // The sandboxed runtime and the tokens.
  assert.equal(pod.runtimeClassName, find('RuntimeClass').metadata.name);
  const secret = pod.volumes.find((v) => v.secret).secret.secretName;
  assert.equal(find('Secret').metadata.name, secret);
  const kust = parseAllDocuments(readFileSync(path.join(DIR, 'kustomization.yaml'), 'utf8'))[0].toJS();
  assert.deepEqual([...kust.resources].sort(), Object.keys(m).sort());
});

test('haproxy -c passes on docs/deploy/haproxy.cfg', () => {
  const env = { ...process.env, SAGEBOX_0: '127.0.0.1:1', SAGEBOX_1: '127.0.0.1:2', SAGEBOX_2: '127.0.0.1:3',
    SAGEBOX_ROUTER_BIND: '127.0.0.1:18080' };
  const r = spawnSync('haproxy', ['-c', '-f', HAPROXY_CFG], { env, encoding: 'utf8' });
  const out = r.stdout + r.stderr;
  assert.equal(r.status, 0, out);
  assert.match(out, /Configuration file is valid/);
  assert.doesNotMatch(out, /WARNING|ALERT/, out);
});
