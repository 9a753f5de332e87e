"""What NCCL's own float max/min do with NaN (why reduce::multi combines the
per-GPU values with its own kernel after an all-gather instead of using
ncclAllReduce). Runs on a machine with >= 2 GPUs and CuPy built with NCCL."""
import cupy as cp
from cupy.cuda import nccl

devices = [0, 1]
comms = nccl.NcclCommunicator.initAll(devices)
print("NCCL", nccl.get_version())
for name, op in (("max", nccl.NCCL_MAX), ("min", nccl.NCCL_MIN)):
    for values in ((float("nan"), 1.0), (1.0, float("nan"))):
        sends, recvs, streams = [], [], []
        for device, value in zip(devices, values):
            with cp.cuda.Device(device):
                sends.append(cp.array([value], dtype=cp.float32))
                recvs.append(cp.full(1, 7.0, dtype=cp.float32))
                streams.append(cp.cuda.Stream(non_blocking=True))
        nccl.groupStart()
        for comm, send, recv, stream in zip(comms, sends, recvs, streams):
            comm.allReduce(send.data.ptr, recv.data.ptr, 1, nccl.NCCL_FLOAT32, op, stream.ptr)
        nccl.groupEnd()
        for device, stream in zip(devices, streams):
            with cp.cuda.Device(device):
                stream.synchronize()
        print(f"ncclAllReduce {name} of ranks' values {values}: every rank gets",
              [float(r.get()[0]) for r in recvs])
