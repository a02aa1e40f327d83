import jax, jax.numpy as jnp
x = jnp.ones((1, 4, 32, 32), jnp.float32)
k = jnp.ones((8, 4, 3, 3), jnp.float32)
y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME")
y.block_until_ready()
print("jax conv ok", tuple(y.shape), str(jax.devices()[0].platform), float(y.sum()))
