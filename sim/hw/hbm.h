#pragma once
/// High-bandwidth memory: independent channels, address-interleaved every hbm.interleave bytes,
/// with the channel order of each round of `channels` consecutive interleave blocks rotated by a
/// hash of the round (as GPUs hash addresses over their channels): a contiguous stream still
/// visits every channel once per round, and a stride that is a multiple of the interleave does not
/// camp on a few channels.
/// Each channel's data bus keeps the tick at which it is next free (bandwidth by reservation).
/// Reads move at the channel's edge bandwidth in the topology × efficiency.hbm, writes at that ×
/// hbm.write_rate; a transfer that starts less than hbm.mix_window after one in the other
/// direction ended on its channel moves at × hbm.mixed_read_rate or × hbm.mixed_write_rate
/// instead (a bus that turns between reads and writes moves less than it does in either direction
/// alone: traces/measured/h200-hbm-mix). Row locality: a channel's
/// address space is cut into rows of hbm.row_size bytes, spread over hbm.banks_per_channel banks
/// (row mod banks), each
/// with one open row. An access to a row that is not open first holds its bank for
/// hbm.row_miss_penalty (precharge + activate) once the bank's previous activation is done;
/// only then can it take the bus. Activations in different banks overlap with each other and
/// with transfers, so a row miss mostly adds latency, and costs bandwidth only when one bank
/// must open rows faster than one per row_miss_penalty. (A real controller also reorders
/// requests to batch row hits; this model does not, which is why the bank is not held while a
/// request queues for the bus.)
/// The latency beyond the channel (the slice → channel edge) is added by the caller.

#include <cstdint>
#include <vector>

#include "sim/core/fast_mod.h"
#include "sim/core/hash.h"
#include "sim/core/units.h"
#include "sim/hw/config.h"
#include "sim/hw/topology.h"

namespace memwall {

/// What a channel access does: a line fetched for the L2 or a dirty line written back.
enum class HbmOp : std::uint8_t { kRead, kWrite };

class Hbm {
 public:
  /// Channel read bandwidths from `topology`'s channel edges, × efficiency.hbm; mixed reads and
  /// writes at that × their hbm fractions.
  Hbm(const HardwareConfig& config, const Topology& topology);
  /// The same on the topology `config` builds.
  explicit Hbm(const HardwareConfig& config) : Hbm(config, Topology(config)) {}

  /// Banks per channel of the row-buffer model (hbm.banks_per_channel).
  std::uint32_t banks_per_channel() const { return m_banks; }

  /// The channel that holds byte address `addr`.
  std::uint32_t channel_of(std::uint64_t addr) const {
    const std::uint64_t block = addr / m_interleave;
    const std::uint64_t round = m_round_of_block(block);
    return channel_in_round(round, block - round * m_channels);
  }

  /// Reserves the channel of `addr` for `sectors` sectors arriving at `t`, moved at the rate of
  /// `kOp` (mixed or not, by the channel's last transfer the other way). Returns the tick the
  /// transfer ends; adds the wait for the channel to `queue_delay` and sets `channel` to the
  /// channel used.
  template <HbmOp kOp>
  Tick access(std::uint64_t addr, std::uint32_t sectors, Tick t, Tick& queue_delay,
              std::uint32_t& channel) {
    const std::uint64_t block =
        m_interleave_shift != 0 ? addr >> m_interleave_shift : addr / m_interleave;
    const std::uint64_t round = m_round_of_block(block);
    // Streams stay in one round for `channels` blocks; the fetches and the write-backs are two
    // such streams (a write-back's line left the L2 long after it was fetched), so each keeps its
    // own last round.
    RoundMemo& memo = m_last[static_cast<std::size_t>(kOp)];
    if (round != memo.round) {
      memo.round = round;
      memo.rotation = rotation_of_round(round);
    }
    const std::uint32_t ch = rotated(block - round * m_channels, memo.rotation);
    // Address within the channel: whole interleave blocks of this channel, then the offset.
    const std::uint64_t local = round * m_interleave + (addr - block * m_interleave);
    const std::uint64_t row = m_row_shift != 0 ? local >> m_row_shift : local / m_row_size;
    channel = ch;
    const std::uint64_t bank_of_row = m_bank_mask != 0 ? row & m_bank_mask : row % m_banks;
    const std::size_t bank = std::size_t{ch} * m_banks + bank_of_row;
    Tick ready = t;  // when the data could take the bus
    Bank& b = m_banks_state[bank];
    if (b.open_row != row) {
      b.open_row = row;
      ++m_row_misses;
      const Tick activate = t > b.open_at ? t : b.open_at;
      queue_delay += activate - t;
      ready = activate + m_row_miss_penalty;
      b.open_at = ready;
    } else if (b.open_at > t) {
      queue_delay += b.open_at - t;  // the row is still opening for an earlier access
      ready = b.open_at;
    }
    // Mixed when the other direction used the channel less than m_mix_window before this
    // transfer starts (after its wait for the bus, not when it arrives). The bus is booked as
    // Reservations::reserve does, with the duration chosen by the start. Both durations are
    // loaded before the start is known, so that the choice is a select, not a dependent load.
    constexpr std::size_t kDir = static_cast<std::size_t>(kOp);
    Channel& c = m_channel_state[ch];
    const Tick* ticks = &m_ticks[kDir * 2 * m_mixed_stride + ch * m_channel_stride + sectors];
    const Tick alone = ticks[0];
    const Tick mixed = ticks[m_mixed_stride];
    const Tick start = ready > c.next_free ? ready : c.next_free;
    const Tick duration = start < c.until[1 - kDir] ? mixed : alone;
    queue_delay += start - ready;
    c.busy += duration;
    const Tick end = checked_end(start, duration, "a transfer");
    c.next_free = end;
    // Bookings need not come in time order: each direction keeps its latest window.
    const Tick window_end = end + m_mix_window;  // both at most 2^62: no overflow
    if (window_end > c.until[kDir]) c.until[kDir] = window_end;
    return end;
  }

  /// The same, when the caller does not need the channel.
  template <HbmOp kOp>
  Tick access(std::uint64_t addr, std::uint32_t sectors, Tick t, Tick& queue_delay) {
    std::uint32_t channel = 0;
    return access<kOp>(addr, sectors, t, queue_delay, channel);
  }

  /// The tick every channel's bus is free again: the end of the last transfer booked so far.
  Tick busy_until() const;

  /// Busy ticks of each channel's bus since the last reset_busy.
  std::vector<Tick> busy() const;
  void reset_busy();

  /// Accesses that opened a new row so far.
  std::uint64_t row_misses() const { return m_row_misses; }

 private:
  /// Channel of the `index`-th interleave block of round `round`: index rotated by a 64-bit mix
  /// of the round (splitmix64 finaliser), reduced by multiply-shift.
  std::uint32_t channel_in_round(std::uint64_t round, std::uint64_t index) const {
    return rotated(index, rotation_of_round(round));
  }
  std::uint64_t rotation_of_round(std::uint64_t round) const {
    return reduce_hash(mix64(round), m_channels);
  }
  std::uint32_t rotated(std::uint64_t index, std::uint64_t rotation) const {
    const std::uint64_t ch = index + rotation;
    return static_cast<std::uint32_t>(ch >= m_channels ? ch - m_channels : ch);
  }

  std::uint64_t m_interleave;
  std::uint64_t m_channels;
  std::uint64_t m_row_size;
  FastDiv64 m_round_of_block;  ///< interleave block → its round: block / channels
  std::uint32_t m_interleave_shift = 0;  ///< log2(interleave) when a power of two > 1, else 0
  std::uint32_t m_row_shift = 0;  ///< log2(row_size) when a power of two > 1, else 0
  Tick m_row_miss_penalty;
  std::uint32_t m_banks;
  std::uint64_t m_bank_mask = 0;  ///< banks - 1 if a power of two > 1 (no division), else 0
  /// Transfer ticks of `sectors` sectors at [(HbmOp · 2 + mixed) · m_mixed_stride + channel ·
  /// m_channel_stride + sectors]: a read on a channel that serves reads alone, a mixed read, a
  /// write alone, a mixed write. Channels of one bandwidth (the usual chip) share one row of
  /// sectors_per_line + 1 entries per kind (m_channel_stride 0), so the table stays in the host's
  /// L1 cache.
  std::vector<Tick> m_ticks;
  std::size_t m_channel_stride = 0;
  std::size_t m_mixed_stride = 0;
  Tick m_mix_window = 0;  ///< hbm.mix_window
  /// A channel's bus: when it is next free, the ticks booked on it since reset_busy, and per
  /// HbmOp the end of its latest transfer in that direction + m_mix_window (a transfer the other
  /// way that starts before is mixed). Together, so that an access reads one host cache line.
  struct Channel {
    Tick next_free = 0;
    Tick busy = 0;
    Tick until[2] = {0, 0};
  };
  std::vector<Channel> m_channel_state;
  /// A bank's row buffer: its open row and when its last activation ends (together, so that an
  /// access reads one host cache line).
  struct Bank {
    std::uint64_t open_row = ~std::uint64_t{0};  ///< none yet
    Tick open_at = 0;
  };
  std::vector<Bank> m_banks_state;  ///< [channel · banks + bank]
  std::uint64_t m_row_misses = 0;
  /// A round and its rotation (rounds are below 2^48: ~0 is none yet).
  struct RoundMemo {
    std::uint64_t round = ~std::uint64_t{0};
    std::uint64_t rotation = 0;
  };
  RoundMemo m_last[2];  ///< [HbmOp]: the round of the last access of each kind
};

}  // namespace memwall
