// The public C API (include/heaprec/heaprec.h), implemented on the preload library's profiler.
#include <errno.h>

#include "heaprec/heaprec.h"
#include "preload/alloc/sampling.h"
#include "preload/attach/dormant.h"
#include "preload/dump/dump.h"
#include "preload/export.h"
#include "preload/state.h"

using heaprec::preload::DumpReason;

HEAPREC_EXPORT int heaprec_dump(const char* path) {
  int error = heaprec::preload::Dump(DumpReason::kApi, path);
  return error == 0 ? 0 : -error;
}

HEAPREC_EXPORT int heaprec_stop(void) {
  if (heaprec::preload::g_settings.dormant) {
    heaprec::preload::SetSampling(false);  // at once, as without dormant mode
    heaprec::preload::RequestDetach();     // and the dump thread's name follows
    return 0;
  }
  if (heaprec::preload::g_recorder.load() == nullptr) return -ENOSYS;
  heaprec::preload::SetSampling(false);
  return 0;
}

HEAPREC_EXPORT int heaprec_start(void) {
  if (heaprec::preload::g_settings.dormant) {
    heaprec::preload::RequestAttach();  // the deferred start-up runs on the dump thread
    return 0;
  }
  if (heaprec::preload::g_recorder.load() == nullptr) return -ENOSYS;
  heaprec::preload::SetSampling(true);
  return 0;
}

HEAPREC_EXPORT int heaprec_set_sample_interval(uint64_t bytes) {
  if (bytes == 0) return -EINVAL;
  heaprec::preload::SetSampleInterval(bytes);
  return 0;
}

HEAPREC_EXPORT int heaprec_is_active(void) { return heaprec::preload::IsActive() ? 1 : 0; }
