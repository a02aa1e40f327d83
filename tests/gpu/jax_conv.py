import jax, jax.numpy as jnp
x = jnp.ones((1, 4, 32, 32), jnp.float32)
k = jnp.ones((8, 4, 3, 3), jnp.float32)
y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME")
y.block_until_ready()
print("jax conv ok", tuple(y.shape), str(jax.devices()[0].platform), float(y.sum()))
import os
if os.environ.get("CDT_PRINT_MAPS"):  # pin-stack.sh: which cuDNN files this process mapped
    seen = {l.split()[-1] for l in open("/proc/self/maps") if "/libcudnn" in l}
    for p in sorted(seen):
        print("maps:", p)
