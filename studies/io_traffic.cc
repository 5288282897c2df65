#include "studies/io_traffic.h"

#include "models/closed_forms.h"

namespace memwall {

IoBytes closed_form_bytes(const WorkloadParams& params) {
  const Traffic t = closed_form_traffic(params);
  return {t.read_bytes, t.write_bytes};
}

}  // namespace memwall
