#include "sim/engine/run_result.h"

namespace memwall {

const char* resource_class_name(ResourceClass c) {
  switch (c) {
    case ResourceClass::kSmPort: return "sm_port";
    case ResourceClass::kL2Slice: return "l2_slice";
    case ResourceClass::kHbmChannel: return "hbm_channel";
    case ResourceClass::kTensorPipe: return "tensor_pipe";
    case ResourceClass::kFp32Pipe: return "fp32_pipe";
    case ResourceClass::kSfuPipe: return "sfu_pipe";
    case ResourceClass::kSmemPipe: return "smem_pipe";
    case ResourceClass::kIssuePipe: return "issue_pipe";
  }
  return "?";
}

std::string resource_instance_name(ResourceClass c, std::uint32_t index) {
  switch (c) {
    case ResourceClass::kSmPort:
      return "sm " + std::to_string(index / 2) + (index % 2 == 0 ? " to_sm" : " from_sm");
    case ResourceClass::kL2Slice: return "slice " + std::to_string(index);
    case ResourceClass::kHbmChannel: return "channel " + std::to_string(index);
    default: return "sm " + std::to_string(index);
  }
}

}  // namespace memwall
