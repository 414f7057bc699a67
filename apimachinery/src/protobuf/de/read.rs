//! [`Read`] and [`deserializer!`]: what each deserializer of the wire decides itself, and the
//! one serde `Deserializer` implementation built from it for all of them.
//!
//! The wire says what a value is, as JSON's text does, so every deserializer here reads its
//! value the way the wire gives it whatever the type asked for (serde's `deserialize_any`),
//! with the same exceptions everywhere: an option is `Some` (an absent field is never
//! visited), a newtype struct is its inner value, an ignored value is skipped unread, and an
//! enum is read as the deserializer says (a string is a unit variant, as in JSON).

use serde::de::Visitor;

use crate::protobuf::Error;

/// How a deserializer of the wire reads its value.
pub(super) trait Read<'de>: Sized {
    /// Reads the value as the wire gives it.
    fn read<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error>;

    /// Reads the value for a type that asked for an enum: as [`read`](Self::read) unless the
    /// deserializer holds a string, which is a unit variant.
    fn read_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.read(visitor)
    }
}

/// Implements serde's `Deserializer` for types that implement [`Read`]:
/// `deserializer!('de => A, B<'de>)`.
macro_rules! deserializer {
    ($lt:lifetime => $($ty:ty),+ $(,)?) => {$(
        impl<$lt> serde::de::Deserializer<$lt> for $ty {
            type Error = $crate::protobuf::Error;

            fn deserialize_any<V: serde::de::Visitor<$lt>>(
                self,
                visitor: V,
            ) -> Result<V::Value, Self::Error> {
                $crate::protobuf::de::read::Read::read(self, visitor)
            }

            fn deserialize_option<V: serde::de::Visitor<$lt>>(
                self,
                visitor: V,
            ) -> Result<V::Value, Self::Error> {
                visitor.visit_some(self)
            }

            fn deserialize_newtype_struct<V: serde::de::Visitor<$lt>>(
                self,
                _name: &'static str,
                visitor: V,
            ) -> Result<V::Value, Self::Error> {
                visitor.visit_newtype_struct(self)
            }

            fn deserialize_ignored_any<V: serde::de::Visitor<$lt>>(
                self,
                visitor: V,
            ) -> Result<V::Value, Self::Error> {
                visitor.visit_unit()
            }

            fn deserialize_enum<V: serde::de::Visitor<$lt>>(
                self,
                name: &'static str,
                variants: &'static [&'static str],
                visitor: V,
            ) -> Result<V::Value, Self::Error> {
                $crate::protobuf::de::read::Read::read_enum(self, name, variants, visitor)
            }

            serde::forward_to_deserialize_any! {
                bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
                byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
            }
        }
    )+};
}

pub(super) use deserializer;
