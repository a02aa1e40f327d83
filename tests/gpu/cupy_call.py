import cupy
a = cupy.arange(1000, dtype=cupy.float32)
s = float((a * 2).sum())
print("cupy ok", s, "runtime", cupy.cuda.runtime.runtimeGetVersion(), "driver", cupy.cuda.runtime.driverGetVersion())
