// Private: stages.h is not among dataplane's public headers.
#include "dataplane/stages.h"
