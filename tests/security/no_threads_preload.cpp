// SPDX-License-Identifier: Apache-2.0
// LD_PRELOAD shim for ContainerStart.InstallWorksWhenNoThreadCanBeCreated:
// pthread_create fails with EAGAIN, as it does in a container whose pids
// limit is reached (the threads of a process count as pids).
#include <pthread.h>

#include <cerrno>

extern "C" int
pthread_create(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*)
{
  return EAGAIN;
}
