#include "toolkit/core/cpu_threads.h"

#include <gtest/gtest.h>
#include <sched.h>

using csan::core::cgroup_cpu_limit;

TEST(CpuThreads, CgroupQuotaRoundsUpToWholeCpusAndMaxMeansNoLimit) {
  EXPECT_EQ(cgroup_cpu_limit("max 100000"), std::nullopt);
  EXPECT_EQ(cgroup_cpu_limit("200000 100000"), 2u);
  EXPECT_EQ(cgroup_cpu_limit("150000 100000\n"), 2u);
  EXPECT_EQ(cgroup_cpu_limit("50000 100000"), 1u);
  EXPECT_EQ(cgroup_cpu_limit("100000 100000"), 1u);
  EXPECT_EQ(cgroup_cpu_limit(""), std::nullopt);
  EXPECT_EQ(cgroup_cpu_limit("12x 100000"), std::nullopt);
  EXPECT_EQ(cgroup_cpu_limit("100000 0"), std::nullopt);
  EXPECT_EQ(cgroup_cpu_limit("-5 100000"), std::nullopt);
}

// The count follows the affinity mask (taskset, Slurm's binding), not the machine.
TEST(CpuThreads, UsableCpusFollowTheAffinityMask) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  const unsigned allowed = static_cast<unsigned>(CPU_COUNT(&all));
  EXPECT_GE(csan::core::usable_cpu_count(), 1u);
  EXPECT_LE(csan::core::usable_cpu_count(), allowed);

  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const unsigned pinned = csan::core::usable_cpu_count();
  ASSERT_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
  EXPECT_EQ(pinned, 1u);
}

TEST(CpuThreads, OnlyANonEmptyThreadVariableIsTheUsersChoice) {
  ::unsetenv("OMP_NUM_THREADS");
  ::unsetenv("MKL_NUM_THREADS");
  EXPECT_EQ(csan::core::thread_count_variable(), std::nullopt);
  ::setenv("OMP_NUM_THREADS", "", 1);
  EXPECT_EQ(csan::core::thread_count_variable(), std::nullopt);
  ::setenv("MKL_NUM_THREADS", "3", 1);
  EXPECT_EQ(csan::core::thread_count_variable(), "MKL_NUM_THREADS");
  ::unsetenv("MKL_NUM_THREADS");
  ::setenv("OMP_NUM_THREADS", "2", 1);
  EXPECT_EQ(csan::core::thread_count_variable(), "OMP_NUM_THREADS");
  ::unsetenv("OMP_NUM_THREADS");
}
