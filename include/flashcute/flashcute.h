#pragma once
// Umbrella header of the public C++ API.
#include "flashcute/api.h"
#include "flashcute/args.h"
#include "flashcute/status.h"
#include "flashcute/tensor.h"
