//! Parsing a tool's command line, with the errors a user can act on. clap's own wording for a
//! negative number ("unexpected argument '-5' found") reads as if the option were wrong; every
//! count, size and time of kgap is 0 or more, so that is what the error says.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::Parser;

/// Exit status of a usage error, as clap's own (and every kgap tool's "bad usage").
pub const EXIT_USAGE: i32 = 2;

/// `T::parse()`, but a negative number given to an option is named as such.
pub fn parse<T: Parser>() -> T {
    parse_from(std::env::args_os())
}

/// [`parse`] over given arguments (the first is the program's name).
pub fn parse_from<T, I, S>(args: I) -> T
where
    T: Parser,
    I: IntoIterator<Item = S>,
    S: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    match T::try_parse_from(&args) {
        Ok(t) => t,
        Err(e) => {
            if let Some(msg) = negative_number(&e, &args) {
                eprintln!("error: {msg}\n\nFor more information, try '--help'.");
                std::process::exit(EXIT_USAGE);
            }
            e.exit()
        }
    }
}

/// "--backoff-ms -5: a negative number; fetch.queue.backoff.ms values are 0 or more".
fn negative_number(e: &clap::Error, args: &[std::ffi::OsString]) -> Option<String> {
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let rest = arg.strip_prefix('-')?;
    if rest.is_empty() || rest.parse::<f64>().is_err() {
        return None;
    }
    // The option it was meant for: the argument before it, when that is an option.
    let at = args.iter().position(|a| a.to_str() == Some(arg.as_str()))?;
    let before = at
        .checked_sub(1)
        .and_then(|i| args[i].to_str())
        .filter(|b| b.starts_with('-'));
    Some(match before {
        Some(opt) => format!(
            "{opt} {arg}: a negative number; every count, size and time kgap takes is 0 or more \
             (see --help for {opt}'s range)"
        ),
        None => format!(
            "{arg}: a negative number where no option takes one; every count, size and time \
             kgap takes is 0 or more"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Parser, Debug)]
    struct Demo {
        #[arg(long, value_delimiter = ',')]
        backoff_ms: Vec<u64>,
        #[arg(long)]
        reps: Option<u32>,
    }

    fn err(args: &[&str]) -> Option<String> {
        let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        let e = Demo::try_parse_from(&args).expect_err("must fail");
        negative_number(&e, &args)
    }

    #[test]
    fn a_negative_number_names_its_option() {
        let m = err(&["demo", "--backoff-ms", "-5"]).expect("named");
        assert!(m.starts_with("--backoff-ms -5: a negative number"), "{m}");
        let m = err(&["demo", "--reps", "-1"]).expect("named");
        assert!(m.starts_with("--reps -1: a negative number"), "{m}");
    }

    #[test]
    fn other_errors_stay_clap_s() {
        assert_eq!(err(&["demo", "--nope"]), None);
        assert_eq!(err(&["demo", "-x"]), None);
        let args: Vec<std::ffi::OsString> = ["demo", "--backoff-ms", "10,,20"]
            .iter()
            .map(Into::into)
            .collect();
        let e = Demo::try_parse_from(&args).expect_err("an empty item is refused");
        assert_eq!(e.kind(), ErrorKind::ValueValidation);
    }
}
