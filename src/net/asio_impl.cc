// The one translation unit that compiles Asio, Asio SSL and Beast (separate compilation).
// Every other file includes their headers with BOOST_*_SEPARATE_COMPILATION defined, which
// keeps each Beast-using translation unit far cheaper to build.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
