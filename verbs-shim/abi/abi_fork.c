/* SPDX-License-Identifier: MIT */
/*
 * abi_fork.c: the fork-safety calls. rdma-core needs them because a NIC
 * DMAs into pinned pages that copy-on-write would move after fork(); it
 * marks registered ranges MADV_DONTFORK. uroce has no DMA: uroced reaches
 * application memory with process_vm_readv/writev on the registering pid,
 * or through a memfd the program shares with it (mr_share.c), whose pages
 * a fork() neither moves nor shares with the child (the child gets private
 * copies). Fork is therefore always safe: the calls succeed without doing anything
 * and report IBV_FORK_UNNEEDED, the value rdma-core reports on kernels
 * whose RDMA stack is fork-safe by itself.
 */
#include <stddef.h>

#include "abi.h"

/* Always 0: nothing to prepare (see the file comment). */
int ibv_fork_init(void)
{
	return 0;
}

/* IBV_FORK_UNNEEDED: uroce is fork-safe without ibv_fork_init(). */
enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

/* Always 0: no range needs MADV_DONTFORK. */
int ibv_dontfork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

/* Always 0: counterpart of ibv_dontfork_range(). */
int ibv_dofork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}
