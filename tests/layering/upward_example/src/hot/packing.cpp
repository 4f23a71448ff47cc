// Upward: hot is below train.
#include "train/model.h"
