#pragma once
// The whole public API of rampart.

#include <rampart/task/async.hpp>
#include <rampart/task/config.hpp>
#include <rampart/task/counters.hpp>
#include <rampart/task/dataflow.hpp>
#include <rampart/task/executor.hpp>
#include <rampart/task/finish.hpp>
#include <rampart/task/future.hpp>
#include <rampart/task/runtime.hpp>
#include <rampart/task/when_all.hpp>

#include <rampart/resilience/await_check.hpp>
#include <rampart/resilience/errors.hpp>
#include <rampart/resilience/executors.hpp>
#include <rampart/resilience/fault_injection.hpp>
#include <rampart/resilience/replay.hpp>
#include <rampart/resilience/replicate.hpp>
#include <rampart/resilience/this_task.hpp>
#include <rampart/resilience/vote.hpp>
