//! Loaders turn bytes into data. They never touch the filesystem themselves.
