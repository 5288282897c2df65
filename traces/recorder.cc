#include "traces/recorder.h"

#include <string>

namespace memwall {

CtaOpLimitError::CtaOpLimitError(std::uint64_t limit)
    : UsageError("a CTA of more than " + std::to_string(limit) + " ops (" +
                 std::to_string(limit * sizeof(Op)) +
                 " bytes): more than this run may hold of one CTA"),
      m_limit(limit) {}

void Recorder::append(const Op& op) {
  if (m_ops->size() >= m_max_ops) throw CtaOpLimitError(m_max_ops);
  m_ops->push_back(op);
}

void Recorder::load(std::uint8_t tensor, const Box& box, std::uint16_t tag) {
  Op op;
  op.kind = OpKind::load;
  op.tensor = tensor;
  op.tag = tag;
  op.box = box;
  append(op);
}

void Recorder::store(std::uint8_t tensor, const Box& box, std::uint16_t tag) {
  Op op;
  op.kind = OpKind::store;
  op.tensor = tensor;
  op.tag = tag;
  op.box = box;
  append(op);
}

void Recorder::reduce(std::uint8_t tensor, const Box& box) {
  Op op;
  op.kind = OpKind::reduce;
  op.tensor = tensor;
  op.box = box;
  append(op);
}

void Recorder::wait(std::uint16_t tag) {
  Op op;
  op.kind = OpKind::wait;
  op.tag = tag;
  append(op);
}

void Recorder::compute(ComputeUnit unit, std::uint64_t amount, std::uint16_t tag) {
  if (amount == 0) return;
  Op op;
  op.kind = OpKind::compute;
  op.unit = unit;
  op.amount = amount;
  op.tag = tag;
  append(op);
}

void Recorder::smem(std::uint64_t bytes, std::uint16_t tag) {
  if (bytes == 0) return;
  Op op;
  op.kind = OpKind::smem;
  op.amount = bytes;
  op.tag = tag;
  append(op);
}

void Recorder::barrier() {
  Op op;
  op.kind = OpKind::barrier;
  append(op);
}

}  // namespace memwall
