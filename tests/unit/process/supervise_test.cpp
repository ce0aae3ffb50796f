// SPDX-License-Identifier: Apache-2.0
// process/supervise.hpp, what `exec --audit` stands on: the child's status
// comes back as a direct run's would, and a signal this process receives
// reaches the child.
#include "process/supervise.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>

namespace prewarm::process {

TEST(Supervise, ReturnsTheChildsStatus)
{
  auto exited = run_forwarding_signals({"sh", "-c", "exit 3"});
  ASSERT_TRUE(exited) << exited.error().message();
  ASSERT_TRUE(WIFEXITED(*exited));
  EXPECT_EQ(WEXITSTATUS(*exited), 3);

  auto missing = run_forwarding_signals({"prewarm-test-no-such-program"});
  ASSERT_TRUE(missing);
  EXPECT_EQ(WEXITSTATUS(*missing), 127); // as env(1)
}

// The child asks its parent (this test) to be terminated; the parent's
// handler forwards SIGTERM, and the child's trap exits 7.
TEST(Supervise, ForwardsSignalsToTheChild)
{
  auto forwarded =
    run_forwarding_signals({"sh", "-c", "trap 'exit 7' TERM; kill -TERM $PPID; i=0; while [ $i -lt 100 ]; do "
                                        "sleep 0.1; i=$((i+1)); done; exit 1"});
  ASSERT_TRUE(forwarded) << forwarded.error().message();
  ASSERT_TRUE(WIFEXITED(*forwarded));
  EXPECT_EQ(WEXITSTATUS(*forwarded), 7);
}

// exit_as() ends a process as its child ended: the same status, the same signal.
TEST(Supervise, ExitsAsTheChildEnded)
{
  EXPECT_EXIT(exit_as(*run_forwarding_signals({"sh", "-c", "exit 4"})), ::testing::ExitedWithCode(4), "");
  EXPECT_EXIT(exit_as(*run_forwarding_signals({"sh", "-c", "kill -USR2 $$"})), ::testing::KilledBySignal(SIGUSR2), "");
}

} // namespace prewarm::process
