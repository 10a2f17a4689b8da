// Why a profile was written: its reason= comment and manifest entry (schema/profile_schema.h).
#pragma once

#include "schema/profile_schema.h"

namespace heaprec::preload {

// The first four are final profiles (one per process, named by the template without a sequence
// number); see process/endings.h.
enum class DumpReason {
  kExit,            // exit() or return from main
  kUnderscoreExit,  // _exit() or _Exit()
  kCrash,           // a fatal signal with the default action
  kTerminated,      // a termination signal with the default action
  kInterval,        // HEAPREC_DUMP_INTERVAL
  kSignal,          // HEAPREC_DUMP_SIGNAL
  kApi,             // heaprec_dump()
  kPeak,            // the peak profile
  kAbove,           // HEAPREC_DUMP_ABOVE
  kHttp,            // served at /debug/pprof/heap (HEAPREC_HTTP), never written to a file
  kDetach,          // `heaprec detach PID` of an injected process (attach/injected.h)
  kRequest,         // `heaprec dump PID`
};

inline bool IsFinal(DumpReason reason) {
  return reason == DumpReason::kExit || reason == DumpReason::kUnderscoreExit ||
         reason == DumpReason::kCrash || reason == DumpReason::kTerminated;
}

inline const char* ReasonName(DumpReason reason) {
  switch (reason) {
    case DumpReason::kExit:
      return schema::kReasonExit;
    case DumpReason::kUnderscoreExit:
      return schema::kReasonUnderscoreExit;
    case DumpReason::kCrash:
      return schema::kReasonCrash;
    case DumpReason::kTerminated:
      return schema::kReasonTerminated;
    case DumpReason::kAbove:
      return schema::kReasonAbove;
    case DumpReason::kInterval:
      return schema::kReasonInterval;
    case DumpReason::kSignal:
      return schema::kReasonSignal;
    case DumpReason::kApi:
      return schema::kReasonApi;
    case DumpReason::kPeak:
      return schema::kReasonPeak;
    case DumpReason::kHttp:
      return schema::kReasonHttp;
    case DumpReason::kDetach:
      return schema::kReasonDetach;
    case DumpReason::kRequest:
      return schema::kReasonRequest;
  }
  return "unknown";
}

}  // namespace heaprec::preload
