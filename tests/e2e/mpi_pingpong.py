# SPDX-License-Identifier: MIT
"""mpi_pingpong.py N: ranks 0 and 1 send 64 KiB back and forth N times (MPI
Send/Recv through mpi4py), then check that both hold the same bytes: rank 0's
random buffer, sent over and sent back each time. Rank 0 prints one line:
'ranks 2 iters N MB/s X same True|False'."""
import os
import sys
import zlib

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
iters = int(sys.argv[1])
size = 1 << 16
buf = bytearray(os.urandom(size)) if rank == 0 else bytearray(size)
start = MPI.Wtime()
for i in range(iters):
    if rank == 0:
        comm.Send([buf, MPI.BYTE], dest=1, tag=i)
        comm.Recv([buf, MPI.BYTE], source=1, tag=i)
    else:
        comm.Recv([buf, MPI.BYTE], source=0, tag=i)
        comm.Send([buf, MPI.BYTE], dest=0, tag=i)
elapsed = MPI.Wtime() - start
want = comm.bcast(zlib.crc32(buf) if rank == 0 else None, root=0)
same = comm.gather(zlib.crc32(buf) == want, root=0)
if rank == 0:
    print("ranks %d iters %d MB/s %.1f same %s" %
          (comm.Get_size(), iters, 2 * iters * size / elapsed / 1e6, all(same)))
