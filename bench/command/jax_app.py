#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A JAX application with its own persistent compilation cache, as a user
writes one: a jitted MLP, layer norm, softmax attention and a scan, each at a
few shapes. The cache directory comes from the application's environment
(JAX_COMPILATION_CACHE_DIR, read by JAX itself); the application lowers the
cache thresholds so every executable is cached, as the JAX docs suggest for
start-up time. Prints one JSON line: first_result_s (process start to all
results on the host), import_s, digest (sha256 of every result's bytes) and
the JAX cache's own hit/miss counts from its monitoring events."""
import time

STARTED = time.perf_counter()

import hashlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax._src import monitoring  # noqa: E402

IMPORTED = time.perf_counter()
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)

events = {}
monitoring.register_event_listener(lambda name, **kw: events.__setitem__(name, events.get(name, 0) + 1))


def mlp(params, x):
    for w, b in params:
        x = jax.nn.gelu(x @ w + b)
    return x


def layer_norm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b


def attention(q, k, v):
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(q.shape[-1]).astype(q.dtype)
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)


def cumulative(x):
    return jax.lax.scan(lambda c, r: (c * 0.9 + r, c), jnp.zeros_like(x[0]), x)[1]


def main():
    key = jax.random.PRNGKey(0)
    results = []
    for width in (256, 512, 1024):
        ks = jax.random.split(key, 8)
        params = [(jax.random.normal(ks[i], (width, width)) / width**0.5, jnp.zeros(width)) for i in range(3)]
        x = jax.random.normal(ks[4], (64, width))
        results.append(jax.jit(mlp)(params, x))
        results.append(jax.jit(layer_norm)(x, jnp.ones(width), jnp.zeros(width)))
        q = jax.random.normal(ks[5], (2, 4, 64, width // 4))
        results.append(jax.jit(attention)(q, q * 0.5, q + 1.0))
        results.append(jax.jit(cumulative)(x))
    digest = hashlib.sha256()
    for r in results:
        digest.update(jax.device_get(r).tobytes())
    done = time.perf_counter()
    hits = sum(v for k, v in events.items() if k.endswith("cache_hits"))
    misses = sum(v for k, v in events.items() if k.endswith("cache_misses"))
    print(json.dumps({"app": "jax", "first_result_s": round(done - STARTED, 3), "import_s": round(IMPORTED - STARTED, 3),
                      "digest": digest.hexdigest(), "jax_cache_hits": hits, "jax_cache_misses": misses,
                      "backend": jax.default_backend(), "jax": jax.__version__,
                      "cache_dir": os.environ.get("JAX_COMPILATION_CACHE_DIR", "")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
