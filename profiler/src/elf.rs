//! Just enough ELF to find a symbol's address (`_SEGGER_RTT`) in firmware: 32- and 64-bit,
//! little-endian, `.symtab` with its string table. Every offset is checked against the file.

/// The value of symbol `name`, if the ELF has it.
pub fn symbol_address(elf: &[u8], name: &str) -> Option<u64> {
    if elf.get(0..4)? != b"\x7fELF" || *elf.get(5)? != 1 {
        return None; // not ELF, or not little-endian
    }
    let is64 = *elf.get(4)? == 2;
    let u16_at = |o: usize| elf.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |o: usize| {
        elf.get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |o: usize| {
        elf.get(o..o + 8)
            .map(|b| u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    };
    let word = |o: usize| {
        if is64 {
            u64_at(o)
        } else {
            u32_at(o).map(u64::from)
        }
    };
    let (shoff, shentsize, shnum) = if is64 {
        (u64_at(0x28)?, u16_at(0x3a)?, u16_at(0x3c)?)
    } else {
        (u64::from(u32_at(0x20)?), u16_at(0x2e)?, u16_at(0x30)?)
    };
    let section = |i: usize| -> Option<(u32, u32, u64, u64, u32)> {
        let at = usize::try_from(shoff)
            .ok()?
            .checked_add(i.checked_mul(usize::from(shentsize))?)?;
        let (off, size, link, entsize) = if is64 {
            (
                word(at + 0x18)?,
                word(at + 0x20)?,
                u32_at(at + 0x28)?,
                word(at + 0x38)?,
            )
        } else {
            (
                word(at + 0x10)?,
                word(at + 0x14)?,
                u32_at(at + 0x18)?,
                word(at + 0x24)?,
            )
        };
        Some((u32_at(at + 4)?, link, off, size, entsize as u32))
    };
    for i in 0..usize::from(shnum) {
        let (kind, link, off, size, entsize) = section(i)?;
        if kind != 2 || entsize == 0 {
            continue; // not SHT_SYMTAB
        }
        let (_, _, str_off, str_size, _) = section(link as usize)?;
        let strtab = elf.get(
            usize::try_from(str_off).ok()?..usize::try_from(str_off.checked_add(str_size)?).ok()?,
        )?;
        let count = size / u64::from(entsize);
        for k in 0..count {
            let at = usize::try_from(off.checked_add(k * u64::from(entsize))?).ok()?;
            let (name_off, value) = if is64 {
                (u32_at(at)?, u64_at(at + 8)?)
            } else {
                (u32_at(at)?, u64::from(u32_at(at + 4)?))
            };
            let rest = strtab.get(name_off as usize..)?;
            let end = rest.iter().position(|&b| b == 0)?;
            if &rest[..end] == name.as_bytes() {
                return Some(value);
            }
        }
    }
    None
}
