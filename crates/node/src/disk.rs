//! The few disk primitives AMPED needs, each honest about whether it may block.
//!
//! - [`read_at_nowait`] and [`resident`] never wait for the disk: the event loop uses them
//!   to decide whether data is in memory (the OS page cache) before touching it.
//! - [`read_at`], [`read_direct`] and [`read_uncached`] may block: only helper threads
//!   call them.
//! - [`read_miss`] is the one read of bytes the node's own cache does not hold, choosing
//!   among those three by `--direct-io` (helpers only).
//! - [`sendfile`] sends file bytes straight from the page cache to a socket; the loop only
//!   calls it for ranges [`resident`] said are in memory.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::FileExt;

use crate::translate::FileMeta;

/// O_DIRECT transfers must be aligned to the logical block size; 4 KiB covers every
/// device this runs on (512-byte and 4K-native alike).
const DIRECT_ALIGN: u64 = 4096;

/// Read `len` bytes at `off` only if the page cache holds them all (preadv2 with
/// RWF_NOWAIT). `Ok(None)` means "would block, ask a helper", also on kernels or file
/// systems without RWF_NOWAIT.
pub fn read_at_nowait(file: &File, off: u64, len: usize) -> io::Result<Option<Vec<u8>>> {
    let mut buf = vec![0u8; len];
    let iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: len };
    // SAFETY: `iov` describes `buf`, which is valid for writes of `len` bytes and outlives
    // the call; the fd is open for the duration of the borrow of `file`.
    let n =
        unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, off as libc::off_t, libc::RWF_NOWAIT) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EAGAIN)
            | Some(libc::EOPNOTSUPP)
            | Some(libc::EINVAL)
            | Some(libc::ENOSYS) => Ok(None),
            _ => Err(e),
        };
    }
    // A short read is either end of file (the file shrank: let a helper sort it out) or a
    // partially cached range: both go to a helper.
    Ok((n as usize == len).then_some(buf))
}

/// Read exactly `len` bytes at `off` through the page cache (may block).
pub fn read_at(file: &File, off: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    file.read_exact_at(&mut buf, off)?;
    Ok(buf)
}

/// Read exactly `len` bytes at `off` from a file opened with O_DIRECT, bypassing the page
/// cache, so the read costs what a cache miss really costs (may block).
pub fn read_direct(file: &File, off: u64, len: usize) -> io::Result<Vec<u8>> {
    let start = off - off % DIRECT_ALIGN;
    let end = (off + len as u64).div_ceil(DIRECT_ALIGN) * DIRECT_ALIGN;
    let span = (end - start) as usize;
    // Over-allocate and start at the first aligned address inside, instead of a custom
    // allocation: one copy of at most `len` bytes afterwards is cheap next to a disk read.
    let mut raw = vec![0u8; span + DIRECT_ALIGN as usize];
    let skew = raw.as_ptr().align_offset(DIRECT_ALIGN as usize);
    let aligned = &mut raw[skew..skew + span];
    let mut filled = 0usize;
    while filled < span {
        match file.read_at(&mut aligned[filled..], start + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        // Only the last transfer before end of file may be short and unaligned.
        if !filled.is_multiple_of(DIRECT_ALIGN as usize) {
            break;
        }
    }
    let want_end = (off - start) as usize + len;
    if filled < want_end {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "file shorter than expected"));
    }
    Ok(aligned[(off - start) as usize..want_end].to_vec())
}

/// The `--direct-io` fallback for file systems that refuse O_DIRECT (tmpfs): read through
/// the page cache, then tell the kernel to drop those pages, so the next miss pays again.
pub fn read_uncached(file: &File, off: u64, len: usize) -> io::Result<Vec<u8>> {
    let buf = read_at(file, off, len)?;
    // SAFETY: plain syscall on an open fd; advice failures are harmless and ignored.
    unsafe {
        libc::posix_fadvise(
            file.as_raw_fd(),
            off as libc::off_t,
            len as libc::off_t,
            libc::POSIX_FADV_DONTNEED,
        );
    }
    Ok(buf)
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// Whether every page of `off..off+len` is in the page cache (mmap + mincore). Mapping
/// does not fault pages in, so this never waits for the disk. Errors count as "not
/// resident", which only costs a trip to a helper.
pub fn resident(file: &File, off: u64, len: usize) -> bool {
    if len == 0 {
        return true;
    }
    let page = page_size();
    let start = off - off % page;
    let span = (off + len as u64 - start) as usize;
    // SAFETY: a fresh read-only shared mapping of an open fd; it is only passed to mincore
    // and unmapped before returning, never dereferenced.
    unsafe {
        let addr = libc::mmap(
            std::ptr::null_mut(),
            span,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            start as libc::off_t,
        );
        if addr == libc::MAP_FAILED {
            return false;
        }
        let pages = span.div_ceil(page as usize);
        let mut vec = vec![0u8; pages];
        let ok = libc::mincore(addr, span, vec.as_mut_ptr()) == 0;
        libc::munmap(addr, span);
        ok && vec.iter().all(|v| v & 1 == 1)
    }
}

/// One sendfile(2) call: up to `count` bytes of `file` from `*off` to the socket `sock`;
/// `*off` advances by what was sent. A non-blocking socket gives `WouldBlock`.
pub fn sendfile(sock: RawFd, file: &File, off: &mut u64, count: usize) -> io::Result<usize> {
    let mut o = *off as libc::off_t;
    // SAFETY: the caller owns `sock`, `file` is borrowed; both fds are open for the duration of the borrows; `o` is a valid off_t.
    let n = unsafe { libc::sendfile(sock, file.as_raw_fd(), &mut o, count) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    *off = o as u64;
    Ok(n as usize)
}

/// Read bytes the node's own cache does not hold (helpers only: this blocks). With
/// `--direct-io` the page cache is bypassed, or emptied afterwards where O_DIRECT is refused.
pub fn read_miss(meta: &FileMeta, direct_io: bool, off: u64, len: usize) -> io::Result<Vec<u8>> {
    match (&meta.direct, direct_io) {
        (Some(direct), _) => read_direct(direct, off, len),
        (None, true) => read_uncached(&meta.file, off, len),
        (None, false) => read_at(&meta.file, off, len),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp_file(bytes: &[u8]) -> (std::path::PathBuf, File) {
        let dir = std::env::temp_dir().join(format!("node-disk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("f{}", bytes.len()));
        File::create(&path).unwrap().write_all(bytes).unwrap();
        let f = File::open(&path).unwrap();
        (path, f)
    }

    #[test]
    fn reads_agree() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let (path, f) = temp_file(&data);
        assert_eq!(read_at(&f, 100, 5000).unwrap(), &data[100..5100]);
        assert_eq!(read_uncached(&f, 4095, 10).unwrap(), &data[4095..4105]);
        // Just written, so in the page cache: NOWAIT either reads it or declines.
        if let Some(b) = read_at_nowait(&f, 3, 9000).unwrap() {
            assert_eq!(b, &data[3..9003]);
        }
        // A plain fd stands in for O_DIRECT here: the alignment arithmetic is what is tested.
        assert_eq!(read_direct(&f, 4000, 6000).unwrap(), &data[4000..10_000]);
        assert_eq!(read_direct(&f, 0, 1).unwrap(), &data[..1]);
        assert!(read_direct(&f, 9000, 2000).is_err());
        assert!(read_at(&f, 9000, 2000).is_err());
        let _ = resident(&f, 0, 10_000);
        assert!(resident(&f, 0, 0));
        std::fs::remove_file(path).unwrap();
    }
}
