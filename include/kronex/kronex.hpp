#pragma once
// kronex: Kronecker-structured linear algebra. The one header applications include.
#include "core/error.hpp"
#include "factors/any_factor.hpp"
#include "factors/banded.hpp"
#include "factors/diagonal.hpp"
#include "factors/function_solver.hpp"
#include "factors/identity.hpp"
#include "factors/finite.hpp"
#include "factors/from_entries.hpp"
#include "factors/gallery.hpp"
#include "expr/kron.hpp"
#include "compile.hpp"
