"""ember.distributed: torch.distributed's process groups and collectives on gloo (see
DESIGN.md, "Many processes"). Importing it is cheap: the gloo binding (ember._C_gloo)
loads on the first init_process_group."""
from ._store import (DistBackendError, DistError, DistNetworkError, DistStoreError, FileStore, HashStore,
                     PrefixStore, Store, TCPStore)
from .distributed_c10d import (Backend, GroupMember, P2POp, ProcessGroup, ReduceOp, Work, all_gather,
                               all_gather_into_tensor, all_gather_object, all_reduce, all_to_all, all_to_all_single,
                               barrier, batch_isend_irecv, broadcast, broadcast_object_list, default_pg_timeout,
                               destroy_process_group, gather, gather_object, get_backend,
                               get_default_backend_for_device, get_global_rank, get_node_local_rank, get_group_rank,
                               get_process_group_ranks, get_rank, get_world_size, group, init_process_group, irecv,
                               is_available, is_gloo_available, is_initialized, is_mpi_available, is_nccl_available,
                               is_torchelastic_launched, is_ucc_available, isend, monitored_barrier, new_group, recv,
                               reduce, reduce_scatter, reduce_scatter_tensor, scatter, scatter_object_list, send)

from .distributed_c10d import _get_default_group  # noqa: F401 (torch has it here too)

ReduceOpType = ReduceOp.RedOpType
