// SPDX-License-Identifier: Apache-2.0
#include "layer/program_table.hpp"

#include "layer/next_dispatch.hpp"

namespace prewarm::layer {

ProgramTable&
ProgramTable::instance()
{
  // Leaked on purpose: applications release programs from their own static
  // destructors, which may run after ours.
  static auto* const table = new ProgramTable;
  return *table;
}

std::optional<TrackedProgram>
ProgramTable::find(cl_program program) const
{
  std::lock_guard lock(m_mutex);
  const auto it = m_programs.find(program);
  if (it == m_programs.end()) {
    return std::nullopt;
  }
  return it->second;
}

void
ProgramTable::put(cl_program program, TrackedProgram tracked)
{
  std::lock_guard lock(m_mutex);
  if (m_programs.insert_or_assign(program, std::move(tracked)).second) {
    next().clRetainProgram(program);
  }
}

bool
ProgramTable::retain(cl_program program)
{
  std::lock_guard lock(m_mutex);
  const auto it = m_programs.find(program);
  if (it == m_programs.end()) {
    return false;
  }
  ++it->second.application_references;
  return true;
}

std::optional<TrackedProgram>
ProgramTable::release(cl_program program)
{
  std::lock_guard lock(m_mutex);
  const auto it = m_programs.find(program);
  if (it == m_programs.end() || --it->second.application_references > 0) {
    return std::nullopt;
  }
  auto tracked = std::move(it->second);
  m_programs.erase(it);
  return tracked;
}

bool
ProgramTable::tracks(cl_program program) const
{
  std::lock_guard lock(m_mutex);
  return m_programs.contains(program);
}

cl_program
ProgramTable::shadow_of(cl_program program) const
{
  std::lock_guard lock(m_mutex);
  const auto it = m_programs.find(program);
  return it != m_programs.end() && it->second.shadow != nullptr ? it->second.shadow : program;
}

bool
ProgramTable::is_virtual(cl_program program) const
{
  std::lock_guard lock(m_mutex);
  const auto it = m_programs.find(program);
  return it != m_programs.end() && it->second.virtual_compile.has_value();
}

std::vector<std::pair<cl_program, TrackedProgram>>
ProgramTable::recorded_in(cl_context context) const
{
  std::lock_guard lock(m_mutex);
  std::vector<std::pair<cl_program, TrackedProgram>> out;
  for (const auto& [program, tracked] : m_programs) {
    if ((context == nullptr || tracked.context == context) && tracked.record_at_release) {
      out.emplace_back(program, tracked);
    }
  }
  return out;
}

void
ProgramTable::put_kernel(cl_kernel kernel, cl_program application_program)
{
  std::lock_guard lock(m_mutex);
  m_kernels.insert_or_assign(kernel, application_program);
}

cl_program
ProgramTable::kernel_program(cl_kernel kernel) const
{
  std::lock_guard lock(m_mutex);
  const auto it = m_kernels.find(kernel);
  return it == m_kernels.end() ? nullptr : it->second;
}

cl_program
ProgramTable::take_kernel(cl_kernel kernel)
{
  std::lock_guard lock(m_mutex);
  const auto it = m_kernels.find(kernel);
  if (it == m_kernels.end()) {
    return nullptr;
  }
  const auto program = it->second;
  m_kernels.erase(it);
  return program;
}

} // namespace prewarm::layer
