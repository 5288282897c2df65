#pragma once
/// The flash3 workload: the FlashAttention-3-style forward of models/cuda/hopper/
/// flash3_attention.cu as an op stream, box for box. Its plugin and its closed form
/// (docs/models.md derives it).
///
/// The kernel: a persistent grid of min(tiles, SMs) CTAs of 384 threads (a producer warpgroup
/// and two consumer warpgroups of 64 query rows each); a tile is (query head, Q block of 128
/// rows), CTA c taking tiles c, c + grid, ... — head by head, or when causal the longest first
/// (every head's last Q block, then the one before). The producer loads a tile's Q block (d/64
/// TMA boxes of 64 columns) once the previous tile's last S product is done, and its visible K/V
/// blocks of 128 keys into `stages` buffers, K and V each refilled once both consumers are done
/// with them. Per block each consumer computes S = Q·Kᵀ and, a block behind, O += P·V with
/// asynchronous wgmma (ComputeUnit::tensor under a tag), its softmax while its own P·V of the
/// block before runs; the two consumers take turns at the tensor cores, so one's softmax runs
/// while the other's products do. Then O / ℓ through a staging buffer (shared memory) and TMA
/// stores of 64-column boxes, and the fp32 logsumexp L.
///
/// The op stream is one sequence per CTA in the order the two consumers' work interleaves under
/// that schedule: consumer 0 issues its products of block j, consumer 1 starts its softmax of
/// block j − 1, consumer 0 its softmax of block j, consumer 1 issues its products of block j; the
/// producer's loads appear as soon as the buffer they refill is released, in the producer's own
/// order (Q, then K, V of each block). A softmax is asynchronous work of its consumer's warps:
/// its fp32 and sfu pipe bookings and its chain of dependent instructions (a `latency` op of
/// flash3_softmax_cycles), all under the consumer's tag, which its next products wait for.

#include <cstdint>

#include "models/closed_forms.h"
#include "models/workload_params.h"

namespace memwall {

class WorkloadPlugin;

/// The flash3 plugin (registered in models/workload_list.h).
const WorkloadPlugin& flash3_plugin();

/// Query rows and keys per tile of the kernel (kBr, kBc of flash3_attention.cu).
inline constexpr std::uint64_t kFlash3BlockQ = 128;
inline constexpr std::uint64_t kFlash3BlockKv = 128;
/// Threads of a CTA: the producer and two consumer warpgroups.
inline constexpr std::uint32_t kFlash3Threads = 384;
/// ptxas's registers per thread at entry, both instantiations (__launch_bounds__(384, 1);
/// setmaxnreg then gives the consumers 240 and the producer 24):
/// traces/measured/h200-flash3/log.txt.
inline constexpr std::uint32_t kFlash3Registers = 168;

/// The SM cycles one consumer warpgroup's softmax of a 64 × 128 score block takes at least, its
/// dependent instructions issuing one after another on one warp per scheduler: the kernel's
/// softmax alone (`flash3_attention --variants`, no wgmma, both consumers at once) ran 1875
/// cycles a block at d = 128 and 1798 at d = 64 on the H200 (traces/measured/h200-flash3/
/// variants: ms × the launch's clock / the busiest CTA's 1024 blocks; ncu: 403 and 372 warp
/// instructions a block, about 4.7 cycles each, with no pipe full). A property of this kernel's
/// instruction stream on a Hopper SM, measured, not fitted to the forward's time.
std::uint64_t flash3_softmax_cycles(std::uint64_t head_dim);

/// The stages the kernel is instantiated with: 4 at head_dim 64, 2 at 128.
std::uint32_t flash3_default_stages(std::uint64_t head_dim);

/// The shared memory of a CTA (as the kernel allocates it): 1 KiB of alignment slack, Q
/// (128·d·s), `stages` K and V buffers (2·128·d·s each), the O staging buffer (128·d·s) and 256
/// bytes of barriers.
std::uint64_t flash3_smem_bytes(std::uint64_t head_dim, std::uint64_t stages,
                                std::uint32_t element_bytes);

/// The global traffic of resolved flash3 parameters `p`, per tensor: Q once per tile; K and V
/// once per tile over the keys its Q block sees (all Nkv without the mask); O and the fp32 L once.
Traffic flash3_traffic(const WorkloadParams& p);

}  // namespace memwall
