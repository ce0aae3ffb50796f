# SPDX-License-Identifier: Apache-2.0
# A CPU application with JAX's persistent compilation cache: a jitted
# training step (a 6-layer MLP, its loss and gradient) and a jitted
# evaluation, run once each on fixed data. Prints the answer (identical cold,
# warm and through a bundle) and, as the last line, JSON with the process's
# wall and CPU seconds. JAX_COMPILATION_CACHE_DIR locates the cache.
import json
import os
import resource
import time

started = time.perf_counter()
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)

WIDTHS = [64, 256, 256, 256, 256, 256, 10]


def init(key):
    params = []
    for a, b in zip(WIDTHS[:-1], WIDTHS[1:]):
        key, sub = jax.random.split(key)
        params.append((jax.random.normal(sub, (a, b)) / jnp.sqrt(a), jnp.zeros(b)))
    return params


def forward(params, x):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, y):
    logits = forward(params, x)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


@jax.jit
def step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return value, [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, grads)]


@jax.jit
def evaluate(params, x):
    return jnp.argmax(forward(params, x), axis=-1)


key = jax.random.PRNGKey(0)
params = init(key)
x = jax.random.normal(jax.random.PRNGKey(1), (128, WIDTHS[0]))
y = jax.nn.one_hot(jnp.arange(128) % 10, 10)
value, params = step(params, x, y)
predicted = evaluate(params, x)
print(f"loss {float(value):.6f} predictions {int(jnp.sum(predicted))}")
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall_s": time.perf_counter() - started, "cpu_s": usage.ru_utime + usage.ru_stime,
                  "jax": jax.__version__}))
