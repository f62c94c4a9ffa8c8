// A view of a C hash made of a raw pointer is a promise that the hash is
// live and unchanged: only `unsafe` code can make it.
#![allow(unexpected_cfgs)]

#[path = "../../../../rust/kside/abi.rs"]
#[allow(unused)]
mod abi;

fn main() {
    let _ = abi::HashRef::from_raw(core::ptr::null_mut());
}
