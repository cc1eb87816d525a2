//! `recall model check` and `recall model distil`: print what
//! [`Memory::model_check`](crate::Memory::model_check) found, or distil a
//! static table with [`Memory::model_distil`](crate::Memory::model_distil).

use anyhow::Result;

use super::args::ModelCmd;
use super::context::Ctx;

pub fn run(ctx: &Ctx, cmd: ModelCmd) -> Result<u8> {
    match cmd {
        ModelCmd::Check(a) => check(ctx, a.model.as_deref()),
        ModelCmd::Distil { model, out } => {
            let bar = indicatif::ProgressBar::hidden();
            if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
                bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            }
            let dir = ctx.model_distil(model.model.as_deref(), &out, |done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            })?;
            bar.finish_and_clear();
            outln!(
                "distilled {} into {}; set `[semantic] model = \"{}\"` to use it",
                dir.display(),
                out.display(),
                out.display()
            );
            Ok(0)
        }
    }
}

fn check(ctx: &Ctx, model: Option<&std::path::Path>) -> Result<u8> {
    let c = ctx.model_check(model)?;
    outln!("model: {}", c.path.display());
    if c.dir != c.path {
        outln!("files: {}", c.dir.display());
    }
    outln!("kind: {}", c.kind.name());
    outln!("dimension: {}", c.dim);
    outln!("vocabulary: {} tokens", c.vocab_size);
    outln!(
        "load: {:.0} ms (a fresh process's files to one prompt's vector, as the prompt hook pays)",
        c.load.as_secs_f64() * 1000.0
    );
    outln!(
        "one prompt: {:.2} ms (median of 8)",
        c.query.as_secs_f64() * 1000.0
    );
    outln!(
        "passages: {:.0} per second (about 100 words each, batches of {})",
        c.passages_per_sec,
        crate::semantic::check::BATCH
    );
    outln!(
        "sanity: cosine {:.2} for a paraphrase, {:.2} for unrelated text",
        c.paraphrase,
        c.unrelated
    );
    Ok(0)
}
