//! User and system CPU time of the process or of one thread, from `/proc`.
//!
//! `/proc/<pid>/stat` counts in clock ticks (`USER_HZ`, 100 per second on Linux, so a 10 ms
//! resolution); phases measured here last far longer. [`enable_perf`] marks where a profiled
//! phase begins.

use std::{path::PathBuf, time::Duration};

/// Clock ticks per second of `/proc/*/stat` (`USER_HZ`, fixed at 100 by the Linux ABI).
const TICKS_PER_SECOND: u64 = 100;

/// User and system CPU time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CpuTimes {
    /// Time in user mode.
    pub(crate) user: Duration,
    /// Time in the kernel.
    pub(crate) system: Duration,
}

impl CpuTimes {
    /// User plus system time.
    pub(crate) fn total(&self) -> Duration {
        self.user + self.system
    }

    /// The time spent between `earlier` and `self`.
    pub(crate) fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
        }
    }
}

fn read_stat(path: &std::path::Path) -> std::io::Result<CpuTimes> {
    let stat = std::fs::read_to_string(path)?;
    // The command name (field 2) may hold spaces: the fields that follow start after its ')'.
    let after = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or_else(|| std::io::Error::other(format!("unexpected {}", path.display())))?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |index: usize| -> std::io::Result<Duration> {
        let value: u64 = fields
            .get(index)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("no field {index} in {}", path.display())))?;
        Ok(Duration::from_millis(value * 1000 / TICKS_PER_SECOND))
    };
    // utime and stime are fields 14 and 15 of the file, 12th and 13th after the command name.
    Ok(CpuTimes {
        user: ticks(11)?,
        system: ticks(12)?,
    })
}

/// The CPU time of the whole process so far (every thread, live or ended).
pub(crate) fn process() -> CpuTimes {
    read_stat(std::path::Path::new("/proc/self/stat")).unwrap_or_default()
}

/// One thread's CPU time, readable from any thread.
#[derive(Debug, Clone)]
pub(crate) struct ThreadCpu {
    stat: PathBuf,
}

impl ThreadCpu {
    /// The calling thread.
    pub(crate) fn current() -> std::io::Result<Self> {
        // `/proc/thread-self` links to `<pid>/task/<tid>`.
        let link = std::fs::read_link("/proc/thread-self")?;
        Ok(Self {
            stat: PathBuf::from("/proc").join(link).join("stat"),
        })
    }

    /// The thread's CPU time so far (zero once it ended).
    pub(crate) fn times(&self) -> CpuTimes {
        read_stat(&self.stat).unwrap_or_default()
    }
}

/// A point in time for a phase measurement: the process's CPU time minus the server's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    /// Wall clock.
    pub(crate) at: std::time::Instant,
    /// CPU time of the process without the server thread.
    pub(crate) cpu: CpuTimes,
}

impl Mark {
    /// Now, excluding the CPU time of `server` (if any).
    pub(crate) fn now(server: Option<&ThreadCpu>) -> Self {
        let process = process();
        let server = server.map(ThreadCpu::times).unwrap_or_default();
        Self {
            at: std::time::Instant::now(),
            cpu: process.since(&server),
        }
    }
}

/// Writes `enable` to the perf control FIFO named by `BENCH_PERF_CTL`, if set: a consumer's
/// watch phase begins.
pub(crate) fn enable_perf() {
    if let Ok(path) = std::env::var("BENCH_PERF_CTL") {
        let _ = std::fs::write(path, "enable\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_process_and_thread_times() {
        let start = process();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(process().total() >= start.total());
        let thread = ThreadCpu::current().expect("/proc/thread-self");
        assert!(thread.times().total() <= process().total());
    }
}
