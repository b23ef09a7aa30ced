//! Identifiers shared by every engine module.

/// Tablespace id. 0 is the system tablespace `ibdata1`.
pub type SpaceId = u32;
/// Page number within a tablespace.
pub type PageNo = u32;
/// Log sequence number: a byte position in the redo stream.
pub type Lsn = u64;
/// Index id, unique over the whole data directory.
pub type IndexId = u64;
/// Table id, unique over the whole data directory.
pub type TableId = u64;

/// "No page": the value of an absent sibling or chain pointer.
pub const FIL_NULL: u32 = u32::MAX;
/// The system tablespace.
pub const SYSTEM_SPACE: SpaceId = 0;

/// One page of one tablespace.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct PageId {
    pub space: SpaceId,
    pub page: PageNo,
}

impl PageId {
    pub const fn new(space: SpaceId, page: PageNo) -> Self {
        PageId { space, page }
    }

    /// Hash used to pick the buffer pool instance and page-hash partition. Pages of one extent
    /// (64 consecutive pages) go to the same instance, as in InnoDB, so read-ahead stays local.
    #[inline]
    pub fn fold(self) -> u64 {
        let x = (u64::from(self.space) << 32) | u64::from(self.page >> 6);
        x.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(self.page)
    }
}

impl std::fmt::Display for PageId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[space {}, page {}]", self.space, self.page)
    }
}
