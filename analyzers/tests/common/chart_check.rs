//! Charts checked the way a reader sees them: each SVG is laid out with the system's fonts
//! (usvg) and rendered to PNG (resvg), and a chart fails when any text or marker leaves the
//! canvas or two labels are drawn over each other. The PNGs are kept to look at.

use std::path::Path;

use std::sync::{Arc, OnceLock};

use resvg::{tiny_skia, usvg};

/// The system's fonts, loaded once (loading them takes longer than laying out a chart).
fn fonts() -> Arc<usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = usvg::fontdb::Database::new();
            db.load_system_fonts();
            // fontdb's generic sans-serif is Arial; Linux machines have DejaVu Sans.
            let family = ["DejaVu Sans", "Liberation Sans", "Arial"]
                .into_iter()
                .find(|f| {
                    db.faces()
                        .any(|face| face.families.iter().any(|(n, _)| n == f))
                })
                .expect(
                    "no sans-serif font to lay out the charts' text: \
                     scripts/setup installs fonts-dejavu-core",
                );
            db.set_sans_serif_family(family);
            Arc::new(db)
        })
        .clone()
}

/// What is wrong with a chart, one line each; empty when it is fine.
pub fn problems(svg: &str, png: Option<&Path>) -> Vec<String> {
    let mut opt = usvg::Options::default();
    opt.fontdb = fonts();
    let tree = match usvg::Tree::from_str(svg, &opt) {
        Ok(t) => t,
        Err(e) => return vec![format!("not SVG that renders: {e}")],
    };
    let size = tree.size();
    let (w, h) = (size.width(), size.height());
    let mut texts = Vec::new();
    let mut shapes = Vec::new();
    walk(tree.root(), &mut texts, &mut shapes);
    let mut out = Vec::new();
    if texts.is_empty() {
        out.push("no text laid out (fonts?)".into());
    }
    let outside = |r: &usvg::Rect| {
        r.left() < -0.5 || r.top() < -0.5 || r.right() > w + 0.5 || r.bottom() > h + 0.5
    };
    for (label, r) in &texts {
        if outside(r) {
            out.push(format!(
                "text {label:?} at x {:.0}..{:.0}, y {:.0}..{:.0} leaves the {w:.0}x{h:.0} canvas",
                r.left(),
                r.right(),
                r.top(),
                r.bottom()
            ));
        }
    }
    for r in &shapes {
        if outside(r) {
            out.push(format!(
                "a shape at x {:.0}..{:.0}, y {:.0}..{:.0} leaves the {w:.0}x{h:.0} canvas",
                r.left(),
                r.right(),
                r.top(),
                r.bottom()
            ));
        }
    }
    for (i, (a, ra)) in texts.iter().enumerate() {
        for (b, rb) in &texts[i + 1..] {
            let overlap_x = ra.right().min(rb.right()) - ra.left().max(rb.left());
            let overlap_y = ra.bottom().min(rb.bottom()) - ra.top().max(rb.top());
            if overlap_x > 1.0 && overlap_y > 1.0 {
                out.push(format!("text {a:?} is drawn over {b:?}"));
            }
        }
    }
    if let Some(png) = png {
        let mut pixmap = tiny_skia::Pixmap::new(w.ceil() as u32, h.ceil() as u32).expect("size");
        resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
        if let Some(dir) = png.parent() {
            std::fs::create_dir_all(dir).expect("png dir");
        }
        pixmap.save_png(png).expect("write png");
    }
    out
}

fn walk(g: &usvg::Group, texts: &mut Vec<(String, usvg::Rect)>, shapes: &mut Vec<usvg::Rect>) {
    for node in g.children() {
        match node {
            usvg::Node::Group(g) => walk(g, texts, shapes),
            usvg::Node::Text(t) => {
                let label: String = t.chunks().iter().map(|c| c.text()).collect();
                texts.push((label, t.abs_bounding_box()));
            }
            usvg::Node::Path(p) => {
                // The background rectangle is the canvas itself.
                shapes.push(p.abs_bounding_box());
            }
            usvg::Node::Image(_) => {}
        }
    }
}
