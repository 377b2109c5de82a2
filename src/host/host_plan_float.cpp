// The host plans of one value type, compiled once for every program that links
// kronex::host_plans (host_plan.hpp declares them extern there).
#include <complex>

#include <kronex/backends/host/host_plan.hpp>

template class kronex::detail::host_plan<float>;
