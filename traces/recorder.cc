#include "traces/recorder.h"

namespace memwall {

void Recorder::load(std::uint8_t tensor, const Box& box, std::uint16_t tag) {
  Op op;
  op.kind = OpKind::load;
  op.tensor = tensor;
  op.tag = tag;
  op.box = box;
  m_ops->push_back(op);
}

void Recorder::store(std::uint8_t tensor, const Box& box, std::uint16_t tag) {
  Op op;
  op.kind = OpKind::store;
  op.tensor = tensor;
  op.tag = tag;
  op.box = box;
  m_ops->push_back(op);
}

void Recorder::reduce(std::uint8_t tensor, const Box& box) {
  Op op;
  op.kind = OpKind::reduce;
  op.tensor = tensor;
  op.box = box;
  m_ops->push_back(op);
}

void Recorder::wait(std::uint16_t tag) {
  Op op;
  op.kind = OpKind::wait;
  op.tag = tag;
  m_ops->push_back(op);
}

void Recorder::compute(ComputeUnit unit, std::uint64_t amount, std::uint16_t tag) {
  if (amount == 0) return;
  Op op;
  op.kind = OpKind::compute;
  op.unit = unit;
  op.amount = amount;
  op.tag = tag;
  m_ops->push_back(op);
}

void Recorder::smem(std::uint64_t bytes, std::uint16_t tag) {
  if (bytes == 0) return;
  Op op;
  op.kind = OpKind::smem;
  op.amount = bytes;
  op.tag = tag;
  m_ops->push_back(op);
}

void Recorder::barrier() {
  Op op;
  op.kind = OpKind::barrier;
  m_ops->push_back(op);
}

}  // namespace memwall
