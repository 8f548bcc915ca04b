//! Serving the dynamic route: a view from the content cache, or computed on a CPU helper on
//! a miss, then the document cut out of it.

use crate::dynamic::{compute_view, render_document, AppPath, DynamicConfig};
use crate::reply::{error, simple, Reply, ReplyCtx};
use crate::state::{BodyKey, CachedBody, NodeState};
use http1::Status;
use std::rc::Rc;
use std::sync::Arc;

pub async fn serve(
    node: &Rc<NodeState>,
    cfg: &DynamicConfig,
    app: &AppPath<'_>,
    ctx: &ReplyCtx,
    out: &mut Vec<u8>,
) -> Reply {
    let key = BodyKey::View(format!("{}/{}", app.db, app.view));
    let view = match node.cached_body(&key, ctx.hint, |_| true) {
        Some(v) => v,
        None => {
            let name = format!("{}/{}", app.db, app.view);
            let (db, view) = (app.db.to_string(), app.view.to_string());
            let (iterations, bytes) = (cfg.iterations, cfg.view_bytes);
            let work = async {
                let v: Arc<[u8]> = node
                    .cpu
                    .run(move || compute_view(&db, &view, iterations, bytes))
                    .await
                    .ok()?
                    .into();
                let body = CachedBody { stamp: None, bytes: Arc::clone(&v), target: ctx.hint };
                node.store_body(key, body);
                Some(v)
            };
            match node.computing.run(&name, work).await.flatten() {
                Some(v) => v,
                None => return error(node, out, Status::SERVICE_UNAVAILABLE, ctx, &[]),
            }
        }
    };
    let page = render_document(app, &view, cfg.doc_bytes);
    let no_cache: &[(&str, &[u8])] = &[("Cache-Control", b"no-cache")];
    simple(node, out, Status::OK, ctx, "text/html; charset=utf-8", &page, no_cache)
}
