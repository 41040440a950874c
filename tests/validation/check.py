#!/usr/bin/env python3
"""Consistency checks for tests/validation (optional; needs python3-yaml; not part of ctest).

1. Every complete run of tests/reference/runs.yaml has a scenario and a published.json entry.
2. Each scenario uses only the keys of the scenario example of docs/reference.md §3.1 (+ parallel.tp_comm_overlap), its layout
   matches runs.yaml (gpus, tp, pp, dp, cp, global batch, seq len) and is self-consistent
   (gpus = dp*tp*pp*cp, global batch divisible by dp*micro_batch, layers divisible by pp*vp).
3. The formulas of CONVENTIONS.md reproduce the published TFLOP/s / MFU from the published step
   time or tokens/s (prints the table that CONVENTIONS.md quotes).
Usage: python3 tests/validation/check.py   (exit status 1 on any failure)
"""
import csv
import json
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.join(HERE, '..', 'reference')
TOP_KEYS = {'name', 'model', 'hardware', 'topology', 'gpus', 'training', 'parallel'}
TRAINING_KEYS = {'seq_len', 'global_batch', 'micro_batch', 'precision', 'optimizer', 'grad_dtype',
                 'recompute', 'flash_attention', 'fused_kernels', 'tokens'}
PARALLEL_KEYS = {'dp', 'tp', 'pp', 'cp', 'ep', 'zero_stage', 'sequence_parallel', 'schedule',
                 'virtual_stages', 'order', 'first_stage_layers', 'last_stage_layers',
                 'dp_bucket_size', 'overlap_grad_reduce', 'overlap_param_gather', 'tp_comm_overlap'}
ENUMS = {'precision': {'fp32', 'fp16', 'bf16', 'fp8'}, 'grad_dtype': {'fp32', 'bf16', 'fp16'},
         'optimizer': {'adam', 'sgd'}, 'recompute': {'none', 'selective', 'full'},
         'schedule': {'gpipe', '1f1b', 'interleaved_1f1b'}}
failures = []


def fail(msg):
    failures.append(msg)


def model_shape(models, m):
    if isinstance(m, dict):
        a = dict(models[m['base']]['arch'])
        a.update({k: v for k, v in m.items() if k != 'base'})
        return a
    return dict(models[m]['arch'])


# Narayanan 2021 eq. (3) (full recompute); Korthikanti 2022 model FLOPs and selective-recompute HFU.
def narayanan(B, s, L, h, V):
    return 96.0 * B * s * L * h * h * (1 + s / (6.0 * h) + V / (16.0 * L * h))


def korthikanti_model(B, s, L, h, V):
    return 72.0 * B * L * s * h * h * (1 + s / (6.0 * h) + V / (12.0 * h * L))


def korthikanti_selective(B, s, L, h, V):
    return 72.0 * B * L * s * h * h * (1 + s / (3.0 * h) + V / (12.0 * h * L))


# NeMo flops_formulas.py: per-sequence model FLOPs (GPT-3 with its fixed V = 51200; Llama with G/H).
def nemo_gpt3(s, L, h):
    return (24.0 * s * h * h + 4.0 * s * s * h) * 3 * L + 6.0 * s * h * 51200


def nemo_llama(s, L, h, G, H, F, V):
    return s * L * h * h * (12 + 12.0 * G / H + 18.0 * F / h + 12.0 * s / h + 6.0 * V / (L * h))


NEMO_V = {'llama2': 32000, 'llama3': 128256}
# llm-foundry table NumParams (the N its MFU uses), keyed by (model, seq_len).
MOSAIC_N = {('mpt-70b', 2048): 64862437376, ('mpt-30b', 2048): 29975214080,
            ('mpt-13b', 2048): 12853954560, ('mpt-7b', 2048): 6658859008,
            ('mpt-7b', 8192): 6684024832}


def convention_row(e, r, a):
    """Recomputes the source's headline number from the published step time or tokens/s."""
    n = r['hardware']['gpus']
    B = r['batch']['global_batch']
    s = r['batch']['seq_len']
    L, h = a['num_layers'], a['hidden_size']
    cv = e['convention']
    t = e['step_time_s']['value'] if e['step_time_s'] else None
    if cv == 'megatron_hfu_full_recompute':
        return 'TFLOP/s', narayanan(B, s, L, h, 51200) / (t * n * 1e12), e['tflops_per_gpu']['value']
    if cv == 'korthikanti_mfu_hfu':
        return 'MFU %', 100 * korthikanti_model(B, s, L, h, 51200) / (t * n * 312e12), e['mfu']['pct']
    if cv == 'bloom_megatron_tflops':
        return 'TFLOP/s', narayanan(B, s, L, h, 250880) / (t * n * 1e12), e['tflops_per_gpu']['value']
    if cv == 'nemo_model_tflops':
        tok = e['tokens_per_s_per_gpu']['value']
        if r['model_ref'].startswith('megatron-gpt'):
            per_tok = nemo_gpt3(s, L, h) / s
        else:
            fam = 'llama3' if r['model_ref'].startswith('llama3') else 'llama2'
            G = a.get('num_kv_heads', a['num_attention_heads'])
            per_tok = nemo_llama(s, L, h, G, a['num_attention_heads'], a['ffn_hidden_size'],
                                 NEMO_V[fam]) / s
        return 'model TFLOP/s', per_tok * tok / 1e12, e['tflops_per_gpu']['value']
    if cv == 'mosaic_mfu':
        N = MOSAIC_N[(r['model_ref'], s)]
        tok = e['tokens_per_s_per_gpu']['value']
        return 'MFU %', 100 * (6.0 * N + 12.0 * L * h * s) * tok / 312e12, e['mfu']['pct']
    return None


def main():
    runs = yaml.safe_load(open(os.path.join(REF, 'runs.yaml')))['runs']
    models = {m['id']: m for m in yaml.safe_load(open(os.path.join(REF, 'models.yaml')))['models']}
    published = {e['id']: e for e in json.load(open(os.path.join(HERE, 'published.json')))['runs']}
    complete = [r for r in runs if r.get('complete')]
    print(f'{len(complete)} complete runs')
    for r in complete:
        rid = r['id']
        path = os.path.join(HERE, rid + '.yaml')
        if not os.path.exists(path):
            fail(f'{rid}: no scenario file')
            continue
        if rid not in published:
            fail(f'{rid}: no published.json entry')
        sc = yaml.safe_load(open(path))
        for k in set(sc) - TOP_KEYS:
            fail(f'{rid}: unknown top-level key {k}')
        tr, par = sc['training'], sc['parallel']
        for k in set(tr) - TRAINING_KEYS:
            fail(f'{rid}: unknown training key {k}')
        for k in set(par) - PARALLEL_KEYS:
            fail(f'{rid}: unknown parallel key {k}')
        for k, allowed in ENUMS.items():
            v = tr.get(k, par.get(k))
            if v is not None and v not in allowed:
                fail(f'{rid}: {k}={v} not in {sorted(allowed)}')
        p = r['parallelism']
        want = {'gpus': r['hardware']['gpus'], 'tp': p['tp'], 'pp': p['pp'], 'dp': p['dp'],
                'cp': p.get('cp', 1), 'global_batch': r['batch']['global_batch'],
                'seq_len': r['batch']['seq_len']}
        got = {'gpus': sc['gpus'], 'tp': par['tp'], 'pp': par['pp'], 'dp': par['dp'],
               'cp': par['cp'], 'global_batch': tr['global_batch'], 'seq_len': tr['seq_len']}
        if 'micro_batch' in r['batch']:
            want['micro_batch'] = r['batch']['micro_batch']
            got['micro_batch'] = tr['micro_batch']
        for k in want:
            if want[k] != got[k]:
                fail(f'{rid}: {k} = {got[k]}, runs.yaml has {want[k]}')
        if par['dp'] * par['tp'] * par['pp'] * par['cp'] != sc['gpus']:
            fail(f'{rid}: dp*tp*pp*cp != gpus')
        if tr['global_batch'] % (par['dp'] * tr['micro_batch']):
            fail(f'{rid}: global batch not divisible by dp*micro_batch')
        a = model_shape(models, sc['model'])
        L = a['num_layers']
        vp = par['virtual_stages']
        first, last = par.get('first_stage_layers', 0), par.get('last_stage_layers', 0)
        inner = L - first - last
        inner_stages = par['pp'] - (1 if first else 0) - (1 if last else 0)
        if inner % (inner_stages * vp):
            fail(f'{rid}: {L} layers do not split over pp={par["pp"]} x vp={vp}')
        if vp > 1:
            m = tr['global_batch'] // (par['dp'] * tr['micro_batch'])
            if par['schedule'] != 'interleaved_1f1b' or m % par['pp']:
                fail(f'{rid}: interleaving needs the interleaved schedule and micro-batches % pp == 0')
        if a['num_attention_heads'] % par['tp']:
            fail(f'{rid}: heads not divisible by tp')
    print(f'{"run":50s} {"quantity":14s} {"formula":>9s} {"published":>9s}')
    for r in complete:
        e = published.get(r['id'])
        if not e:
            continue
        row = convention_row(e, r, models[r['model_ref']]['arch'])
        if row is None:
            continue
        what, mine, theirs = row
        print(f'{r["id"]:50s} {what:14s} {mine:9.2f} {theirs:9.2f}')
        if abs(mine - theirs) > 0.01 * theirs + 0.05:
            fail(f'{r["id"]}: convention gives {mine:.2f}, published {theirs}')
    vt = list(csv.DictReader(open(os.path.join(HERE, 'vtrain', 'models.csv'))))
    for row in vt:
        a = models[row['model_base']]['arch']
        if (a['hidden_size'], a['num_attention_heads'], a['num_layers']) != (
                int(row['hidden_size']), int(row['num_heads']), int(row['num_layers'])):
            fail(f'vtrain/models.csv: {row["model_base"]} shape differs from models.yaml')
    for row in csv.DictReader(open(os.path.join(REF, 'vtrain', 'multi_node.csv'))):
        m = [v for v in vt if v['params_billion'] == row['Parameters (billion)']]
        if not m or (m[0]['hidden_size'], m[0]['num_heads'], m[0]['num_layers']) != (
                row['hidden size'], row['attention heads'], row['# layers']):
            fail(f'vtrain row {row}: no matching models.csv shape')
    for f in failures:
        print('FAIL', f)
    print('ok' if not failures else f'{len(failures)} failures')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
