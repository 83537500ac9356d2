// A reader/writer mutex from the standard library, annotated for clang's
// -Wthread-safety analysis, that spins briefly before it sleeps.
//
// Shard critical sections are a few cache misses long, while
// std::shared_mutex (pthread_rwlock) puts a contended thread to sleep in
// the kernel at once; a sleep and wake-up cost microseconds, far more than
// waiting out the holder. So Lock and ReaderLock first retry try_lock a
// bounded number of times with a CPU pause between tries, then block.
//
// Why not absl::Mutex: Debian's abseil is not built with ThreadSanitizer
// instrumentation, so TSan reports false races on data guarded by it, while
// the standard library's mutexes are understood by TSan. Abseil's
// annotations still let the compiler check which lock guards what.
#ifndef FEEDCORE_SRC_BASE_MUTEX_H_
#define FEEDCORE_SRC_BASE_MUTEX_H_

#include <mutex>
#include <shared_mutex>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "absl/base/thread_annotations.h"

namespace feedcore::internal {

// About a microsecond of pauses: longer than a typical shard critical
// section, much shorter than a sleep and wake-up.
inline constexpr int kSpinsBeforeSleep = 64;

inline void SpinPause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Locks `mu`, spinning briefly first like SharedMutex. For std::mutex
// critical sections that are a few pointer moves long but that a condition
// variable also needs (so they cannot be a SharedMutex).
inline void LockSpinning(std::mutex& mu) {
  for (int i = 0; i < kSpinsBeforeSleep; ++i) {
    if (mu.try_lock()) return;
    SpinPause();
  }
  mu.lock();
}

class ABSL_LOCKABLE SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    for (int i = 0; i < kSpinsBeforeSleep; ++i) {
      if (mu_.try_lock()) return;
      SpinPause();
    }
    mu_.lock();
  }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION() {
    for (int i = 0; i < kSpinsBeforeSleep; ++i) {
      if (mu_.try_lock_shared()) return;
      SpinPause();
    }
    mu_.lock_shared();
  }
  void ReaderUnlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// Holds `mu` exclusively for the enclosing scope.
class ABSL_SCOPED_LOCKABLE WriterLock {
 public:
  explicit WriterLock(SharedMutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu)
      : mu_(mu) {
    mu_->Lock();
  }
  ~WriterLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  SharedMutex* const mu_;
};

// Holds `mu` shared for the enclosing scope.
class ABSL_SCOPED_LOCKABLE ReaderLock {
 public:
  explicit ReaderLock(SharedMutex* mu) ABSL_SHARED_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->ReaderLock();
  }
  ~ReaderLock() ABSL_UNLOCK_FUNCTION() { mu_->ReaderUnlock(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  SharedMutex* const mu_;
};

}  // namespace feedcore::internal

#endif  // FEEDCORE_SRC_BASE_MUTEX_H_
