// The unit linked first: its copy of Churn is the one the program runs (discarded_copy.h).
#include "discarded_copy.h"

void ChurnFirst(volatile unsigned long* sink) { Churn(sink); }
