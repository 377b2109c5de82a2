#pragma once
// Thin typed wrappers over LAPACK's band and general LU (?gbtrf/?gbtrs/?getrf), band Cholesky
// (?pbtrf) and condition estimates (?gecon, and the ?lacn2 estimator driven by kronex's own
// solves). They return LAPACK's info; callers decide what a nonzero info means (singular factor
// vs. kronex bug).
#include <algorithm>
#include <complex>
#include <type_traits>
#include <vector>

#ifndef lapack_complex_float
#define lapack_complex_float std::complex<float>
#endif
#ifndef lapack_complex_double
#define lapack_complex_double std::complex<double>
#endif
#include <lapack.h>

namespace kronex::lapack {

using int_t = lapack_int;

// The real type of a LAPACK value type (eigenvalues, norms).
template <class T>
struct real_of { using type = T; };
template <class T>
struct real_of<std::complex<T>> { using type = T; };
template <class T>
using real_t_of = typename real_of<T>::type;

// Band LU with partial pivoting. ab is column-major with ldab >= 2*kl+ku+1 and
// ab[(kl+ku+i-j) + j*ldab] = A(i, j).
inline int_t gbtrf(int_t n, int_t kl, int_t ku, float* ab, int_t ldab, int_t* ipiv) {
  int_t info = 0; LAPACK_sgbtrf(&n, &n, &kl, &ku, ab, &ldab, ipiv, &info); return info;
}
inline int_t gbtrf(int_t n, int_t kl, int_t ku, double* ab, int_t ldab, int_t* ipiv) {
  int_t info = 0; LAPACK_dgbtrf(&n, &n, &kl, &ku, ab, &ldab, ipiv, &info); return info;
}
inline int_t gbtrf(int_t n, int_t kl, int_t ku, std::complex<float>* ab, int_t ldab, int_t* ipiv) {
  int_t info = 0; LAPACK_cgbtrf(&n, &n, &kl, &ku, ab, &ldab, ipiv, &info); return info;
}
inline int_t gbtrf(int_t n, int_t kl, int_t ku, std::complex<double>* ab, int_t ldab, int_t* ipiv) {
  int_t info = 0; LAPACK_zgbtrf(&n, &n, &kl, &ku, ab, &ldab, ipiv, &info); return info;
}

// Solve with gbtrf's factors; trans is 'N', 'T' or 'C'. b is column-major n x nrhs.
inline int_t gbtrs(char trans, int_t n, int_t kl, int_t ku, int_t nrhs, const float* ab, int_t ldab,
                   const int_t* ipiv, float* b, int_t ldb) {
  int_t info = 0; LAPACK_sgbtrs(&trans, &n, &kl, &ku, &nrhs, ab, &ldab, ipiv, b, &ldb, &info); return info;
}
inline int_t gbtrs(char trans, int_t n, int_t kl, int_t ku, int_t nrhs, const double* ab, int_t ldab,
                   const int_t* ipiv, double* b, int_t ldb) {
  int_t info = 0; LAPACK_dgbtrs(&trans, &n, &kl, &ku, &nrhs, ab, &ldab, ipiv, b, &ldb, &info); return info;
}
inline int_t gbtrs(char trans, int_t n, int_t kl, int_t ku, int_t nrhs, const std::complex<float>* ab,
                   int_t ldab, const int_t* ipiv, std::complex<float>* b, int_t ldb) {
  int_t info = 0; LAPACK_cgbtrs(&trans, &n, &kl, &ku, &nrhs, ab, &ldab, ipiv, b, &ldb, &info); return info;
}
inline int_t gbtrs(char trans, int_t n, int_t kl, int_t ku, int_t nrhs, const std::complex<double>* ab,
                   int_t ldab, const int_t* ipiv, std::complex<double>* b, int_t ldb) {
  int_t info = 0; LAPACK_zgbtrs(&trans, &n, &kl, &ku, &nrhs, ab, &ldab, ipiv, b, &ldb, &info); return info;
}

// General LU with partial pivoting; a is column-major n x n.
inline int_t getrf(int_t n, float* a, int_t lda, int_t* ipiv) {
  int_t info = 0; LAPACK_sgetrf(&n, &n, a, &lda, ipiv, &info); return info;
}
inline int_t getrf(int_t n, double* a, int_t lda, int_t* ipiv) {
  int_t info = 0; LAPACK_dgetrf(&n, &n, a, &lda, ipiv, &info); return info;
}
inline int_t getrf(int_t n, std::complex<float>* a, int_t lda, int_t* ipiv) {
  int_t info = 0; LAPACK_cgetrf(&n, &n, a, &lda, ipiv, &info); return info;
}
inline int_t getrf(int_t n, std::complex<double>* a, int_t lda, int_t* ipiv) {
  int_t info = 0; LAPACK_zgetrf(&n, &n, a, &lda, ipiv, &info); return info;
}

// Band Cholesky A = C C^H of a Hermitian positive definite band (uplo 'L': ab is column-major
// with ldab >= kd+1 and ab[(i-j) + j*ldab] = A(i, j) for j <= i <= j+kd; C overwrites it). info > 0:
// A is not positive definite.
inline int_t pbtrf(int_t n, int_t kd, float* ab, int_t ldab) {
  const char uplo = 'L'; int_t info = 0; LAPACK_spbtrf(&uplo, &n, &kd, ab, &ldab, &info); return info;
}
inline int_t pbtrf(int_t n, int_t kd, double* ab, int_t ldab) {
  const char uplo = 'L'; int_t info = 0; LAPACK_dpbtrf(&uplo, &n, &kd, ab, &ldab, &info); return info;
}
inline int_t pbtrf(int_t n, int_t kd, std::complex<float>* ab, int_t ldab) {
  const char uplo = 'L'; int_t info = 0; LAPACK_cpbtrf(&uplo, &n, &kd, ab, &ldab, &info); return info;
}
inline int_t pbtrf(int_t n, int_t kd, std::complex<double>* ab, int_t ldab) {
  const char uplo = 'L'; int_t info = 0; LAPACK_zpbtrf(&uplo, &n, &kd, ab, &ldab, &info); return info;
}

// One step of LAPACK's 1-norm estimator (Hager/Higham, ?lacn2) by reverse communication: the
// caller starts with kase = 0 and, while kase != 0 on return, replaces x by A^{-1} x (kase 1)
// or A^{-H} x (kase 2). est is then a lower bound of ||A^{-1}||_1, usually within a factor 3.
// state holds the estimator's own work (v, isgn, isave).
template <class T>
struct lacn2_state {
  std::vector<T> v;
  std::vector<int_t> isgn;
  int_t isave[3] = {0, 0, 0};
};
template <class T>
void lacn2(int_t n, T* x, double& est, int_t& kase, lacn2_state<T>& st) {
  if (st.v.size() != std::size_t(n)) st.v.assign(std::size_t(n), T(0));
  if constexpr (std::is_same_v<T, float>) {
    st.isgn.resize(std::size_t(n));
    float e = float(est);
    LAPACK_slacn2(&n, st.v.data(), x, st.isgn.data(), &e, &kase, st.isave);
    est = double(e);
  } else if constexpr (std::is_same_v<T, double>) {
    st.isgn.resize(std::size_t(n));
    LAPACK_dlacn2(&n, st.v.data(), x, st.isgn.data(), &est, &kase, st.isave);
  } else if constexpr (std::is_same_v<T, std::complex<float>>) {
    float e = float(est);
    LAPACK_clacn2(&n, st.v.data(), x, &e, &kase, st.isave);
    est = double(e);
  } else {
    LAPACK_zlacn2(&n, st.v.data(), x, &est, &kase, st.isave);
  }
}

// Reciprocal 1-norm condition number estimate from getrf's factors; anorm is ||A||_1.
template <class T>
int_t gecon(int_t n, const T* a, int_t lda, double anorm, double& rcond) {
  const char norm = '1';
  const std::size_t m = std::size_t(n);
  int_t info = 0;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>) {
    const float an = float(anorm);
    float rc = 0;
    std::vector<float> rwork(2 * m);
    if constexpr (std::is_same_v<T, float>) {
      std::vector<float> work(4 * m);
      std::vector<int_t> iwork(m);
      LAPACK_sgecon(&norm, &n, a, &lda, &an, &rc, work.data(), iwork.data(), &info);
    } else {
      std::vector<std::complex<float>> work(2 * m);
      LAPACK_cgecon(&norm, &n, a, &lda, &an, &rc, work.data(), rwork.data(), &info);
    }
    rcond = double(rc);
  } else {
    std::vector<double> rwork(2 * m);
    if constexpr (std::is_same_v<T, double>) {
      std::vector<double> work(4 * m);
      std::vector<int_t> iwork(m);
      LAPACK_dgecon(&norm, &n, a, &lda, &anorm, &rcond, work.data(), iwork.data(), &info);
    } else {
      std::vector<std::complex<double>> work(2 * m);
      LAPACK_zgecon(&norm, &n, a, &lda, &anorm, &rcond, work.data(), rwork.data(), &info);
    }
  }
  return info;
}

// The generalized hermitian-definite eigenproblem A v = lambda B v (?sygv, ?hegv; itype 1, jobz
// 'V', uplo 'L'): a and b column-major n x n. On return a holds V with V^H B V = I and w the
// eigenvalues in ascending order. info > n: B is not positive definite (its leading minor of
// order info - n is not).
template <class T>
int_t sygv(int_t n, T* a, T* b, real_t_of<T>* w) {
  const int_t itype = 1;
  const char jobz = 'V', uplo = 'L';
  int_t info = 0, lwork = -1;
  T query{};
  std::vector<real_t_of<T>> rwork(std::size_t(std::max<int_t>(1, 3 * n - 2)));
  auto call = [&](T* work) {
    if constexpr (std::is_same_v<T, float>) LAPACK_ssygv(&itype, &jobz, &uplo, &n, a, &n, b, &n, w, work, &lwork, &info);
    else if constexpr (std::is_same_v<T, double>) LAPACK_dsygv(&itype, &jobz, &uplo, &n, a, &n, b, &n, w, work, &lwork, &info);
    else if constexpr (std::is_same_v<T, std::complex<float>>)
      LAPACK_chegv(&itype, &jobz, &uplo, &n, a, &n, b, &n, w, work, &lwork, rwork.data(), &info);
    else LAPACK_zhegv(&itype, &jobz, &uplo, &n, a, &n, b, &n, w, work, &lwork, rwork.data(), &info);
  };
  call(&query);
  if (info != 0) return info;
  lwork = std::max<int_t>(1, int_t(std::real(query)));
  std::vector<T> work(static_cast<std::size_t>(lwork));
  call(work.data());
  return info;
}

// Cholesky factorization A = L L^H (?potrf, uplo 'L'); a column-major n x n. info > 0: A is not
// positive definite (its leading minor of order info is not).
template <class T>
int_t potrf(int_t n, T* a) {
  const char uplo = 'L';
  int_t info = 0;
  if constexpr (std::is_same_v<T, float>) LAPACK_spotrf(&uplo, &n, a, &n, &info);
  else if constexpr (std::is_same_v<T, double>) LAPACK_dpotrf(&uplo, &n, a, &n, &info);
  else if constexpr (std::is_same_v<T, std::complex<float>>) LAPACK_cpotrf(&uplo, &n, a, &n, &info);
  else LAPACK_zpotrf(&uplo, &n, a, &n, &info);
  return info;
}

} // namespace kronex::lapack
