//! The checked settings of `iocurve stream`, made from its command line
//! before anything is opened: a wrong flag is reported without touching the
//! target (arguments validated before resources open).

use crate::cli::apps::StreamArgs;
use crate::cli::config::target_config;
use crate::error::usage;
use crate::result::Payload;
use crate::result::apps::{FindMaxReport, StreamOutcome, StreamReport};
use crate::result::config::StreamSettings;
use crate::vocab::config::{DEFAULT_AREA, TargetConfig};
use crate::vocab::options::EngineKind;
use anyhow::Result;

/// Default rate when neither --rate nor --fps is given: 5 MB/s.
const DEFAULT_RATE: f64 = 5e6;
/// Smallest region a directory target's scratch file gets.
const MIN_AREA: u64 = 64 << 20;

/// What `stream` runs: the target, bytes per request and bytes per second.
#[derive(Debug, Clone)]
pub struct StreamConfig {
    pub target: TargetConfig,
    pub chunk: u64,
    pub rate: f64,
}

impl StreamConfig {
    pub fn from_args(args: &StreamArgs) -> Result<StreamConfig> {
        let mut target = target_config(&args.target)?;
        target.output = args.live.apply(target.output);
        check_engine(&target)?;
        let (chunk, rate) = chunk_and_rate(args)?;
        Ok(StreamConfig {
            target,
            chunk,
            rate,
        })
    }

    /// The region to open: what the stream would write at its rate over
    /// its time, kept between 64 MiB and the default area.
    pub fn area(&self, args: &StreamArgs) -> u64 {
        (self.rate * args.time.as_secs_f64()).clamp(MIN_AREA as f64, DEFAULT_AREA as f64) as u64
    }

    /// The settings recorded with the result.
    pub fn settings(&self, args: &StreamArgs, offset: u64, span: u64) -> StreamSettings {
        StreamSettings {
            target: self.target.clone(),
            rw: args.rw,
            chunk: self.chunk,
            rate_bytes_per_s: self.rate,
            fps: args.fps,
            deadline_ns: args.deadline.map(|d| d.as_nanos() as u64),
            time_ns: args.time.as_nanos() as u64,
            find_max: args.find_max,
            offset,
            span,
            cpu_load: args.load.cpu_load,
        }
    }

    /// The stream's section of the result: what one run at the rate (or
    /// the search for the highest rate) found.
    pub fn report(
        args: &StreamArgs,
        outcome: StreamOutcome,
        find_max: Option<FindMaxReport>,
    ) -> StreamReport {
        StreamReport {
            direction: args.rw,
            fps: args.fps,
            outcome,
            find_max,
        }
    }

    /// The result's payload: the settings, and what the stream found
    /// (nothing yet, for the header printed before it runs).
    pub fn payload(settings: StreamSettings, stream: StreamReport) -> Payload {
        let config = settings.into();
        Payload::Stream { config, stream }
    }
}

/// The stream runs with the `sync` engine only: one request at a time, as a
/// player reads.
fn check_engine(tcfg: &TargetConfig) -> Result<()> {
    if tcfg.engine == Some(EngineKind::Uring) {
        return Err(usage(
            "stream issues one request at a time on a schedule: leave --engine at auto (or pass --engine sync) and --sqpoll off",
        ));
    }
    if tcfg.threads != 1 {
        return Err(usage("stream runs one schedule: leave --threads at 1"));
    }
    Ok(())
}

/// Bytes per request and bytes per second from --fps/--frame or
/// --rate/--chunk.
fn chunk_and_rate(args: &StreamArgs) -> Result<(u64, f64)> {
    let (chunk, rate) = match (args.fps, args.frame) {
        (Some(fps), Some(frame)) => {
            if !(fps > 0.0 && fps.is_finite()) {
                return Err(usage("--fps must be a positive number such as 60"));
            }
            (frame, frame as f64 * fps)
        }
        (None, Some(_)) => return Err(usage("--frame needs --fps: e.g. --fps 60 --frame 25KiB")),
        _ => (args.chunk, args.rate.unwrap_or(DEFAULT_RATE)),
    };
    if chunk == 0 || chunk > u64::from(u32::MAX / 2) {
        return Err(usage("--chunk/--frame must be above 0 and below 1 GiB"));
    }
    if args.time.is_zero() {
        return Err(usage(
            "--time 0 streams nothing: give a duration such as 10s",
        ));
    }
    Ok((chunk, rate))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(args: &[&str]) -> Result<StreamConfig> {
        match crate::cli::command_of(&[&["stream", "sim:size=32M"], args]) {
            crate::cli::Command::Stream(s) => StreamConfig::from_args(&s),
            _ => unreachable!("a stream command line"),
        }
    }

    fn message(args: &[&str]) -> String {
        config(args).unwrap_err().to_string()
    }

    #[test]
    fn frames_give_chunk_and_rate() {
        let cfg = config(&["--fps", "60", "--frame", "1000"]).unwrap();
        assert_eq!(cfg.chunk, 1000);
        assert_eq!(cfg.rate, 60_000.0);
    }

    #[test]
    fn rate_defaults_to_five_megabytes_per_second() {
        assert_eq!(config(&[]).unwrap().rate, DEFAULT_RATE);
    }

    #[test]
    fn a_frame_needs_fps() {
        assert!(message(&["--frame", "1000"]).contains("--frame needs --fps"));
    }

    #[test]
    fn the_stream_runs_one_schedule() {
        assert!(message(&["--threads", "2"]).contains("leave --threads at 1"));
        assert!(message(&["--engine", "uring"]).contains("one request at a time"));
    }
}
