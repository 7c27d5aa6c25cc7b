// What generated binding files include.
#pragma once
#include <Python.h>
#include "python/arg_parser.h"
#include "python/errors.h"
#include "python/objects.h"
#include "ops/internal.h"  // write_outs
