#include "integrators/dop853.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace clm {

namespace {

// DOP853 [HNW-I, II.10]: the coefficients of Hairer's code DOP853 (the method of Dormand and Prince of order 8
// with Hairer's estimators and continuous extension), with the digits of his Fortran source as transcribed in
// [sw-scipy]. Stages are numbered from 1; stage 13 is the new point (its row is the weight vector b, FSAL),
// stages 14..16 serve the dense output only. tests/high_order_integrator_test.cpp checks every order condition.
constexpr int kStages = 12;
// c_1 .. c_16 (Hairer: C2 .. C16).
constexpr double kC[] = {
    0.0, 0.526001519587677318785587544488e-01, 0.789002279381515978178381316732e-01, 0.118350341907227396726757197510,
    0.281649658092772603273242802490, 0.333333333333333333333333333333, 0.25, 0.307692307692307692307692307692,
    0.651282051282051282051282051282, 0.6, 0.857142857142857142857142857142, 1.0, 1.0, 0.1, 0.2,
    0.777777777777777777777777777778,
};
// a_ij (Hairer: A21 .. A1615); row 13 holds b_1 .. b_12 (Hairer: B1, B6 .. B12).
constexpr TableauEntry kA[] = {
    {2, 1, 5.26001519587677318785587544488e-2},
    {3, 1, 1.97250569845378994544595329183e-2}, {3, 2, 5.91751709536136983633785987549e-2},
    {4, 1, 2.95875854768068491816892993775e-2}, {4, 3, 8.87627564304205475450678981324e-2},
    {5, 1, 2.41365134159266685502369798665e-1}, {5, 3, -8.84549479328286085344864962717e-1},
    {5, 4, 9.24834003261792003115737966543e-1},
    {6, 1, 3.7037037037037037037037037037e-2}, {6, 4, 1.70828608729473871279604482173e-1},
    {6, 5, 1.25467687566822425016691814123e-1},
    {7, 1, 3.7109375e-2}, {7, 4, 1.70252211019544039314978060272e-1}, {7, 5, 6.02165389804559606850219397283e-2},
    {7, 6, -1.7578125e-2},
    {8, 1, 3.70920001185047927108779319836e-2}, {8, 4, 1.70383925712239993810214054705e-1},
    {8, 5, 1.07262030446373284651809199168e-1}, {8, 6, -1.53194377486244017527936158236e-2},
    {8, 7, 8.27378916381402288758473766002e-3},
    {9, 1, 6.24110958716075717114429577812e-1}, {9, 4, -3.36089262944694129406857109825},
    {9, 5, -8.68219346841726006818189891453e-1}, {9, 6, 2.75920996994467083049415600797e1},
    {9, 7, 2.01540675504778934086186788979e1}, {9, 8, -4.34898841810699588477366255144e1},
    {10, 1, 4.77662536438264365890433908527e-1}, {10, 4, -2.48811461997166764192642586468},
    {10, 5, -5.90290826836842996371446475743e-1}, {10, 6, 2.12300514481811942347288949897e1},
    {10, 7, 1.52792336328824235832596922938e1}, {10, 8, -3.32882109689848629194453265587e1},
    {10, 9, -2.03312017085086261358222928593e-2},
    {11, 1, -9.3714243008598732571704021658e-1}, {11, 4, 5.18637242884406370830023853209},
    {11, 5, 1.09143734899672957818500254654}, {11, 6, -8.14978701074692612513997267357},
    {11, 7, -1.85200656599969598641566180701e1}, {11, 8, 2.27394870993505042818970056734e1},
    {11, 9, 2.49360555267965238987089396762}, {11, 10, -3.0467644718982195003823669022},
    {12, 1, 2.27331014751653820792359768449}, {12, 4, -1.05344954667372501984066689879e1},
    {12, 5, -2.00087205822486249909675718444}, {12, 6, -1.79589318631187989172765950534e1},
    {12, 7, 2.79488845294199600508499808837e1}, {12, 8, -2.85899827713502369474065508674},
    {12, 9, -8.87285693353062954433549289258}, {12, 10, 1.23605671757943030647266201528e1},
    {12, 11, 6.43392746015763530355970484046e-1},
    {13, 1, 5.42937341165687622380535766363e-2}, {13, 6, 4.45031289275240888144113950566},
    {13, 7, 1.89151789931450038304281599044}, {13, 8, -5.8012039600105847814672114227},
    {13, 9, 3.1116436695781989440891606237e-1}, {13, 10, -1.52160949662516078556178806805e-1},
    {13, 11, 2.01365400804030348374776537501e-1}, {13, 12, 4.47106157277725905176885569043e-2},
    {14, 1, 5.61675022830479523392909219681e-2}, {14, 7, 2.53500210216624811088794765333e-1},
    {14, 8, -2.46239037470802489917441475441e-1}, {14, 9, -1.24191423263816360469010140626e-1},
    {14, 10, 1.5329179827876569731206322685e-1}, {14, 11, 8.20105229563468988491666602057e-3},
    {14, 12, 7.56789766054569976138603589584e-3}, {14, 13, -8.298e-3},
    {15, 1, 3.18346481635021405060768473261e-2}, {15, 6, 2.83009096723667755288322961402e-2},
    {15, 7, 5.35419883074385676223797384372e-2}, {15, 8, -5.49237485713909884646569340306e-2},
    {15, 11, -1.08347328697249322858509316994e-4}, {15, 12, 3.82571090835658412954920192323e-4},
    {15, 13, -3.40465008687404560802977114492e-4}, {15, 14, 1.41312443674632500278074618366e-1},
    {16, 1, -4.28896301583791923408573538692e-1}, {16, 6, -4.69762141536116384314449447206},
    {16, 7, 7.68342119606259904184240953878}, {16, 8, 4.06898981839711007970213554331},
    {16, 9, 3.56727187455281109270669543021e-1}, {16, 13, -1.39902416515901462129418009734e-3},
    {16, 14, 2.9475147891527723389556272149}, {16, 15, -9.15095847217987001081870187138},
};
// Error weights of the 5th-order estimator (Hairer: ER1, ER6 .. ER12).
constexpr WeightEntry kE5[] = {
    {1, 0.1312004499419488073250102996e-1}, {6, -0.1225156446376204440720569753e+1},
    {7, -0.4957589496572501915214079952}, {8, 0.1664377182454986536961530415e+1},
    {9, -0.3503288487499736816886487290}, {10, 0.3341791187130174790297318841},
    {11, 0.8192320648511571246570742613e-1}, {12, -0.2235530786388629525884427845e-1},
};
// Weights of the 3rd-order estimator (Hairer: BHH1 .. BHH3): err3 = sum (b_i - bhh_i) k_i.
constexpr WeightEntry kBhh[] = {
    {1, 0.244094488188976377952755905512}, {9, 0.733846688281611857341361741547},
    {12, 0.220588235294117647058823529412e-1},
};
// Rows 4..7 of the continuous extension (Hairer: D41 .. D716), over stages 1..16.
constexpr TableauEntry kD[] = {
    {4, 1, -0.84289382761090128651353491142e+1}, {4, 6, 0.56671495351937776962531783590},
    {4, 7, -0.30689499459498916912797304727e+1}, {4, 8, 0.23846676565120698287728149680e+1},
    {4, 9, 0.21170345824450282767155149946e+1}, {4, 10, -0.87139158377797299206789907490},
    {4, 11, 0.22404374302607882758541771650e+1}, {4, 12, 0.63157877876946881815570249290},
    {4, 13, -0.88990336451333310820698117400e-1}, {4, 14, 0.18148505520854727256656404962e+2},
    {4, 15, -0.91946323924783554000451984436e+1}, {4, 16, -0.44360363875948939664310572000e+1},
    {5, 1, 0.10427508642579134603413151009e+2}, {5, 6, 0.24228349177525818288430175319e+3},
    {5, 7, 0.16520045171727028198505394887e+3}, {5, 8, -0.37454675472269020279518312152e+3},
    {5, 9, -0.22113666853125306036270938578e+2}, {5, 10, 0.77334326684722638389603898808e+1},
    {5, 11, -0.30674084731089398182061213626e+2}, {5, 12, -0.93321305264302278729567221706e+1},
    {5, 13, 0.15697238121770843886131091075e+2}, {5, 14, -0.31139403219565177677282850411e+2},
    {5, 15, -0.93529243588444783865713862664e+1}, {5, 16, 0.35816841486394083752465898540e+2},
    {6, 1, 0.19985053242002433820987653617e+2}, {6, 6, -0.38703730874935176555105901742e+3},
    {6, 7, -0.18917813819516756882830838328e+3}, {6, 8, 0.52780815920542364900561016686e+3},
    {6, 9, -0.11573902539959630126141871134e+2}, {6, 10, 0.68812326946963000169666922661e+1},
    {6, 11, -0.10006050966910838403183860980e+1}, {6, 12, 0.77771377980534432092869265740},
    {6, 13, -0.27782057523535084065932004339e+1}, {6, 14, -0.60196695231264120758267380846e+2},
    {6, 15, 0.84320405506677161018159903784e+2}, {6, 16, 0.11992291136182789328035130030e+2},
    {7, 1, -0.25693933462703749003312586129e+2}, {7, 6, -0.15418974869023643374053993627e+3},
    {7, 7, -0.23152937917604549567536039109e+3}, {7, 8, 0.35763911791061412378285349910e+3},
    {7, 9, 0.93405324183624310003907691704e+2}, {7, 10, -0.37458323136451633156875139351e+2},
    {7, 11, 0.10409964950896230045147246184e+3}, {7, 12, 0.29840293426660503123344363579e+2},
    {7, 13, -0.43533456590011143754432175058e+2}, {7, 14, 0.96324553959188282948394950600e+2},
    {7, 15, -0.39177261675615439165231486172e+2}, {7, 16, -0.14972683625798562581422125276e+3},
};

// Step-size control of DOP853 (its defaults): beta = 0 (the PI term off), expo1 = 1/8 - 0.2 beta, safety 0.9,
// the new step between 1/3 (FAC1 = 0.333) and 6 (FAC2) times the old one.
constexpr double kBeta = 0.0;
constexpr double kExpo1 = 1.0 / 8 - kBeta * 0.2;
constexpr double kSafety = 0.9;
constexpr double kFac1 = 0.333, kFac2 = 6.0;
// Hairer's stiffness test: h |lambda| above 6.1 (the stability boundary on the negative real axis is at -6.39)
// on 15 consecutive accepted steps.
constexpr double kStiffHLambda = 6.1;

}  // namespace

const EmbeddedPair& dop853_pair() {
  static const EmbeddedPair pair = [] {
    EmbeddedPair p = make_embedded_pair("dop853", 8, 5, 7, kStages, kC, kA, {}, kE5, {});
    p.b = p.a.row(kStages).head(kStages).transpose();
    p.b3 = Vec::Zero(kStages);
    for (const auto& x : kBhh) p.b3[x.i - 1] = x.value;
    p.d = Mat::Zero(4, p.dense_stages);
    for (const auto& x : kD) p.d(x.i - 4, x.j - 1) = x.value;
    return p;
  }();
  return pair;
}

Dop853::Dop853() : pair_(dop853_pair()) {
  for (int i = 0; i < pair_.dense_stages; ++i) rows_.push_back(stage_terms(pair_.a, i));
  b_ = nonzero_terms(pair_.b);
  e5_ = nonzero_terms(pair_.e);
  bhh_ = nonzero_terms(pair_.b3);
  for (int i = 0; i < 4; ++i) d_[i] = nonzero_terms(pair_.d.row(i).transpose());
}

void Dop853::do_initialize(const IntegratorSettings& s) {
  rtol_ = s.rtol;
  atol_ = s.atol;
  dt_max_ = s.dt_max > 0 ? s.dt_max : std::numeric_limits<double>::infinity();
  fixed_step_ = s.fixed_step;
  const long n = y_.size();
  k_.assign(kStages + 1, Vec::Zero(n));
  kd_.assign(pair_.dense_stages, Vec::Zero(n));
  for (Vec* v : {&y_stage_, &y_new_, &bsum_, &y_old_, &y_end_, &y_dense_stage_}) v->setZero(n);
  for (Vec& v : r_) v.setZero(n);
  t_prev_ = t_;
  h_prev_ = 0;
  err_ = 0;
  err_old_ = 1e-4;
  last_rejected_ = false;
  dense_ready_ = false;
  stiff_steps_ = non_stiff_ = 0;
  if (fixed_step_) {
    h_ = s.dt;
  } else if (s.dt > 0) {
    h_ = std::min(s.dt, dt_max_);
  } else {
    h_ = hairer_initial_step(t_, y_, f_, rtol_, atol_, dt_max_, 8, y_stage_, k_[1],
                             [this](double t, const Vec& y, Vec& dy) { eval_rhs(t, y, dy); });
  }
}

bool Dop853::do_step(double h) {
  const long n = y_.size();
  const double t_new = step_end();
  k_[0] = f_;
  for (int i = 1; i < kStages; ++i) {  // stages 2..12; stage 12 is at c = 1
    stage_value(y_, h, rows_[i], k_, y_stage_);
    eval_rhs(pair_.c[i] == 1.0 ? t_new : t_ + pair_.c[i] * h, y_stage_, k_[i]);
  }
  // y_new = y + h sum b_i k_i (Hairer's K4 = sum b_i k_i, K5 = y + h K4).
  for (long i = 0; i < n; ++i) {
    double s = 0;
    for (const auto& [j, w] : b_) s += w * k_[j][i];
    bsum_[i] = s;
    y_new_[i] = y_[i] + h * s;
  }

  double h_next = h_;
  if (!fixed_step_) {
    // DOP853's error: err5 and err3 in the scaled norm (sc_i = atol + rtol max(|y0_i|, |y1_i|)), combined as
    // |h| err5^2 / sqrt(n (err5^2 + 0.01 err3^2)), so that it behaves like O(h^8) for small h.
    double err5 = 0, err3 = 0;
    for (long i = 0; i < n; ++i) {
      const double sk = std::max(atol_ + rtol_ * std::max(std::abs(y_[i]), std::abs(y_new_[i])),
                                 std::numeric_limits<double>::min());
      double e3 = bsum_[i];
      for (const auto& [j, w] : bhh_) e3 -= w * k_[j][i];
      double e5 = 0;
      for (const auto& [j, w] : e5_) e5 += w * k_[j][i];
      err3 += (e3 / sk) * (e3 / sk);
      err5 += (e5 / sk) * (e5 / sk);
    }
    double deno = err5 + 0.01 * err3;
    if (!(deno > 0)) deno = 1.0;
    err_ = std::abs(h) * err5 * std::sqrt(1.0 / (static_cast<double>(n) * deno));
    const double fac11 = std::pow(err_, kExpo1);
    if (!(err_ <= 1.0)) {  // rejected (a NaN error is a rejection too)
      last_rejected_ = true;
      h_ = std::isfinite(fac11) ? h / std::min(1.0 / kFac1, fac11 / kSafety) : h * kFac1;
      return false;
    }
    // Lund stabilization (PI control; off with beta = 0): fac = err^expo1 / err_old^beta, limited to
    // [1/FAC2, 1/FAC1] after the safety factor.
    double fac = fac11 / std::pow(err_old_, kBeta);
    fac = std::clamp(fac / kSafety, 1.0 / kFac2, 1.0 / kFac1);
    h_next = h / fac;
    if (last_rejected_) h_next = std::min(h_next, h);  // no growth right after a rejection
    last_rejected_ = false;
    err_old_ = std::max(err_, 1e-4);
  }

  eval_rhs(t_new, y_new_, k_[kStages]);  // stage 13: f at the new point (FSAL)

  if (!fixed_step_) {
    // Hairer's stiffness test (DOP853): h |lambda| ~ h |f(y1) - f(Y12)| / |y1 - Y12|, both at t + h. Above 6.1
    // on 15 consecutive steps, the step is limited by stability, not accuracy. It only observes. Tested on every
    // accepted step, as the suite's dopri5 does (the code tests every 1000th unless a step was suspicious).
    if (stats_.stiffness_detected_at < 0) {
      const double den = (y_new_ - y_stage_).squaredNorm();
      const double h_lambda = den > 0 ? h * std::sqrt((k_[kStages] - k_[kStages - 1]).squaredNorm() / den) : 0.0;
      if (h_lambda > kStiffHLambda) {
        non_stiff_ = 0;
        if (++stiff_steps_ == 15) stats_.stiffness_detected_at = t_;
      } else if (++non_stiff_ == 6) {
        stiff_steps_ = 0;
      }
    }
    h_next = std::min(h_next, dt_max_);
  }

  // The dense output keeps this step's stages 1 and 6..13 (the extra stages and the interpolant's
  // coefficients wait for the first interpolate()); 2..5 do not enter it.
  kd_[0].swap(k_[0]);
  for (int j = 5; j <= kStages; ++j) kd_[j].swap(k_[j]);
  dense_ready_ = false;
  y_old_.swap(y_);
  y_.swap(y_new_);
  y_end_ = y_;
  f_ = kd_[kStages];  // FSAL (a copy: reset_state may replace f_, the interpolant keeps its own)
  t_prev_ = t_;
  h_prev_ = h;
  h_ = h_next;
  return true;
}

void Dop853::prepare_dense_output() const {
  const double h = h_prev_;
  for (int i = kStages + 1; i < pair_.dense_stages; ++i) {  // stages 14..16
    stage_value(y_old_, h, rows_[i], kd_, y_dense_stage_);
    eval_rhs_for_dense_output(t_prev_ + pair_.c[i] * h, y_dense_stage_, kd_[i]);
  }
  // CONTD8's coefficients (DOP853): r1 = y0, r2 = y1 - y0, r3 = h k1 - r2, r4 = r2 - h k13 - r3,
  // r5..r8 = h sum_i D_ji k_i (j = 4..7).
  r_[0] = y_old_;
  r_[1] = y_end_ - y_old_;
  r_[2] = h * kd_[0] - r_[1];
  r_[3] = r_[1] - h * kd_[kStages] - r_[2];
  for (int j = 0; j < 4; ++j) weighted_sum(h, d_[j], kd_, r_[4 + j]);
  dense_ready_ = true;
}

void Dop853::interpolate(double t, Vec& y) const {
  if (h_prev_ == 0) {
    y = y_;
    return;
  }
  if (!dense_ready_) prepare_dense_output();
  const double s = (t - t_prev_) / h_prev_, s1 = 1.0 - s;
  y = r_[0] +
      s * (r_[1] + s1 * (r_[2] + s * (r_[3] + s1 * (r_[4] + s * (r_[5] + s1 * (r_[6] + s * r_[7]))))));
}

}  // namespace clm
