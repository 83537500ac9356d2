// FEEDCORE_EXPORT marks what the shared library exports: the public API and
// nothing else. The library is compiled with hidden visibility, so a class
// or function declared in include/feedcore/ without this mark is not
// reachable from a program that links libfeedcore.so, and the engine's
// internals never become part of its ABI. Static builds ignore it.
#ifndef FEEDCORE_EXPORT_H_
#define FEEDCORE_EXPORT_H_

#if defined(__GNUC__) || defined(__clang__)
#define FEEDCORE_EXPORT __attribute__((visibility("default")))
#else
#define FEEDCORE_EXPORT
#endif

#endif  // FEEDCORE_EXPORT_H_
