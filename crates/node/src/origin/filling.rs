//! A cacheable response whose body is still arriving from the origin. One task reads the
//! body into it (and stores the complete response); every request for the object, the one
//! that caused the fetch and all that arrive before the body ends, has already been sent
//! the head and relays the body from here as it grows. Only responses with a declared
//! length up to the cacheable size fill this way, so memory stays bounded by that size.

use super::body::OriginBody;
use super::resume::Resume;
use super::store::{ObjectStore, Stored};
use http1::RequestHead;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use tokio::sync::Notify;

/// Most bytes handed to one reader at a time.
const PIECE: usize = 64 * 1024;

/// The response being filled: its head (a [`Stored`] with an empty body) and the bytes so far.
pub struct Filling {
    pub meta: Arc<Stored>,
    /// The declared body length.
    pub len: u64,
    data: RefCell<Vec<u8>>,
    /// `None` while filling; then whether the whole body arrived (and why not).
    end: RefCell<Option<Result<(), Arc<str>>>>,
    grew: Notify,
}

impl std::fmt::Debug for Filling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Filling({} of {} bytes)", self.data.borrow().len(), self.len)
    }
}

impl Filling {
    /// Start filling `meta` from `body` in a task of its own, in `fills` under `target`
    /// until it ends; put in `store` under `target` once complete. When `body` fails
    /// mid-way (a peer that died or stalled), the rest comes from `resume` if given.
    pub fn start(
        store: &Rc<ObjectStore>,
        fills: &Rc<Fills>,
        target: &str,
        meta: Arc<Stored>,
        len: u64,
        (body, resume): (OriginBody, Option<Resume>),
    ) -> Rc<Filling> {
        let fill = Rc::new(Filling {
            meta,
            len,
            data: RefCell::new(Vec::with_capacity(len as usize)),
            end: RefCell::new(None),
            grew: Notify::new(),
        });
        fills.0.borrow_mut().insert(target.to_string(), Rc::clone(&fill));
        let (store, fills) = (Rc::clone(store), Rc::clone(fills));
        let (target, task_fill) = (target.to_string(), Rc::clone(&fill));
        tokio::task::spawn_local(async move {
            let result = task_fill.read(body, resume).await;
            // An invalidation meanwhile forgot the fill: its body is no longer the target's.
            let current = fills.end(&target, &task_fill);
            if result.is_ok() && current {
                {
                    let m = &task_fill.meta;
                    let body: Arc<[u8]> = task_fill.data.borrow().as_slice().into();
                    let complete = Stored {
                        status: m.status,
                        fields: m.fields.clone(),
                        body,
                        freshness: m.freshness,
                        vary: m.vary.clone(),
                        vary_key: m.vary_key.clone(),
                    };
                    store.put(&target, Arc::new(complete));
                }
            }
            *task_fill.end.borrow_mut() = Some(result);
            task_fill.grew.notify_waiters();
        });
        fill
    }

    async fn read(&self, mut body: OriginBody, mut resume: Option<Resume>) -> Result<(), Arc<str>> {
        // Bytes of the current body already had (a resumed whole copy repeats them).
        let mut skip = 0usize;
        loop {
            match body.next().await {
                Ok(Some(mut piece)) => {
                    if skip > 0 {
                        let n = skip.min(piece.len());
                        piece.drain(..n);
                        skip -= n;
                    }
                    let mut data = self.data.borrow_mut();
                    if data.len() + piece.len() > self.len as usize {
                        return Err("origin sent more than its Content-Length".into());
                    }
                    data.extend_from_slice(&piece);
                    drop(data);
                    self.grew.notify_waiters();
                }
                Ok(None) if self.data.borrow().len() as u64 == self.len => return Ok(()),
                Ok(None) => return Err("the body ended short of its length".into()),
                Err(e) => {
                    let Some(r) = resume.take() else { return Err(e.to_string().into()) };
                    let from = self.data.borrow().len();
                    let (rest, repeated) =
                        r.rest(from as u64).await.map_err(|why| format!("{e}; {why}"))?;
                    body = rest;
                    skip = repeated as usize;
                }
            }
        }
    }

    /// A reader from the first byte.
    pub fn reader(self: &Rc<Filling>) -> FillReader {
        FillReader { fill: Rc::clone(self), pos: 0 }
    }
}

/// The responses being filled, by target (loop-local): requests that find one relay it
/// instead of fetching again.
#[derive(Debug, Default)]
pub struct Fills(RefCell<HashMap<String, Rc<Filling>>>);

impl Fills {
    /// The response being filled for `target` that may answer `req`.
    pub fn for_request(&self, target: &str, req: &RequestHead) -> Option<Rc<Filling>> {
        self.0.borrow().get(target).filter(|f| f.meta.matches(req)).cloned()
    }

    /// Forget `fill` as the one under way for `target` (unless another replaced it);
    /// whether it still was.
    fn end(&self, target: &str, fill: &Rc<Filling>) -> bool {
        let mut map = self.0.borrow_mut();
        let current = map.get(target).is_some_and(|f| Rc::ptr_eq(f, fill));
        if current {
            map.remove(target);
        }
        current
    }

    /// Forget the fill under way for `target`, if any: it will not be stored, and later
    /// requests do not join it (an invalidation made its body outdated). The clients
    /// already relaying it still get all of it.
    pub fn forget(&self, target: &str) {
        self.0.borrow_mut().remove(target);
    }

    /// [`Fills::forget`] every fill whose target `named` picks (a purge of one target on
    /// every site).
    pub fn forget_matching(&self, named: impl Fn(&str) -> bool) {
        self.0.borrow_mut().retain(|target, _| !named(target));
    }
}

/// One client's position in a [`Filling`] body.
#[derive(Debug)]
pub struct FillReader {
    fill: Rc<Filling>,
    pos: usize,
}

impl FillReader {
    /// The next bytes, `None` at the end; an error when the origin failed mid-body.
    pub async fn next(&mut self) -> Result<Option<Vec<u8>>, Arc<str>> {
        loop {
            // Registered before looking, so a wake-up between the look and the wait is kept.
            let grew = self.fill.grew.notified();
            tokio::pin!(grew);
            grew.as_mut().enable();
            {
                let data = self.fill.data.borrow();
                if self.pos < data.len() {
                    let end = data.len().min(self.pos + PIECE);
                    let piece = data[self.pos..end].to_vec();
                    self.pos = end;
                    return Ok(Some(piece));
                }
            }
            match &*self.fill.end.borrow() {
                Some(Ok(())) => return Ok(None),
                Some(Err(why)) => return Err(Arc::clone(why)),
                None => {}
            }
            grew.await;
        }
    }
}
